package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// Demo is what Seed made.
type Demo struct {
	Thread, Guide *snapshots.Thread
	// AmberFox is a thread's desktop box with the agent's and the owner's
	// snapshots; BriskLake is the owner's machine; GreyRidge was released
	// with a kept snapshot; DuskyDune has no snapshots.
	AmberFox, BriskLake, GreyRidge, DuskyDune *snapshots.Box
	// Migration is amber-fox's "before the migration", by the agent.
	Migration *snapshots.Snapshot
}

// WriteFile writes a file in a box's folder.
func (s *Stack) WriteFile(b *snapshots.Box, name, text string) error {
	dir := s.Local.BoxDir(providers.Guest{Backend: b.BackendID, Kind: b.Kind, Host: b.Host, Ref: b.GuestRef, Generation: b.Generation})
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(text), 0o644)
}

// Take takes a snapshot and waits until it is ready.
func (s *Stack) Take(ctx context.Context, c snapshots.Caller, box, name, note string) (*snapshots.Snapshot, error) {
	op, sn, err := s.Taker.Take(ctx, c, take.TakeRequest{Box: box, Name: name, Note: note})
	if err != nil {
		return nil, fmt.Errorf("take %s on %s: %w", name, box, err)
	}
	if op, err = s.Wait(ctx, op); err != nil {
		return nil, err
	}
	if op.State != snapshots.OpDone {
		return nil, fmt.Errorf("take %s on %s: %s", name, box, deref(op.Error))
	}
	sn, _, err = s.Core.Snapshot(ctx, snapshots.Owner(), sn.ID)
	return sn, err
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Seed makes the demo: two threads, four boxes, snapshots by an agent and
// by the owner, a kept one, a restore with its undo, and a released box
// whose kept snapshot outlives it.
func (s *Stack) Seed(ctx context.Context) (*Demo, error) {
	d := &Demo{}
	owner := snapshots.Owner()
	var err error
	if d.Thread, _, err = s.Boxes.CreateThread(ctx, owner, "Fix the sign-in flow"); err != nil {
		return nil, err
	}
	if d.Guide, _, err = s.Boxes.CreateThread(ctx, owner, "Write the API guide"); err != nil {
		return nil, err
	}
	agent := snapshots.Agent(d.Thread.ID)
	mk := func(name, thread string, screen bool) (*snapshots.Box, error) {
		req := snapshots.BoxRequest{Name: name, Backend: "local", Thread: thread, HasScreen: screen}
		if screen {
			req.ScreenURL = s.ScreenURL
		}
		b, err := s.Boxes.AcquireBox(ctx, owner, req)
		if err != nil {
			return nil, err
		}
		return b, s.WriteFile(b, "app/README.md", "# "+name+"\n")
	}
	if d.AmberFox, err = mk("amber-fox", d.Thread.ID, true); err != nil {
		return nil, err
	}
	// Sizes a person would recognise, not a few bytes: an app's build and
	// its database.
	if err := s.WriteFile(d.AmberFox, "app/dist/bundle.js", strings.Repeat("console.log('amber-fox');\n", 24<<20/26)); err != nil {
		return nil, err
	}
	if err := s.WriteFile(d.AmberFox, "app/data/users.csv", strings.Repeat("1,amber@example.com\n", 6<<20/20)); err != nil {
		return nil, err
	}
	if d.BriskLake, err = mk("brisk-lake", "", false); err != nil {
		return nil, err
	}
	if d.GreyRidge, err = mk("grey-ridge", "", false); err != nil {
		return nil, err
	}
	if d.DuskyDune, err = mk("dusky-dune", d.Guide.ID, false); err != nil {
		return nil, err
	}
	if _, err = s.Take(ctx, owner, "amber-fox", "Thu 09:15", ""); err != nil {
		return nil, err
	}
	if err := s.WriteFile(d.AmberFox, "app/db/schema.sql", "create table users (id int);\n"); err != nil {
		return nil, err
	}
	if d.Migration, err = s.Take(ctx, agent, "amber-fox", "before the migration", "Schema v2 lands next."); err != nil {
		return nil, err
	}
	if _, err = s.Take(ctx, owner, "brisk-lake", "clean install", "Nothing but the base image."); err != nil {
		return nil, err
	}
	if err := s.WriteFile(d.BriskLake, "notes.txt", strings.Repeat("work in progress\n", 3<<20/17)); err != nil {
		return nil, err
	}
	if _, err = s.Take(ctx, owner, "brisk-lake", "", ""); err != nil {
		return nil, err
	}
	rc, err := s.Take(ctx, owner, "grey-ridge", "release candidate set-up", "")
	if err != nil {
		return nil, err
	}
	if err := s.seedGreyRidgeReleased(ctx, rc.ID); err != nil {
		return nil, err
	}
	if err := s.seedBriskLakeRestored(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// seedGreyRidgeReleased keeps grey-ridge's release candidate for two days
// and releases the box, emptied from the trash: its kept snapshot
// outlives it.
func (s *Stack) seedGreyRidgeReleased(ctx context.Context, rc string) error {
	owner := snapshots.Owner()
	op, err := s.Keeps.Keep(ctx, owner, snapshots.KeepRequest{Box: "grey-ridge", Snapshot: rc, Days: 2})
	if err != nil {
		return err
	}
	if _, err = s.Wait(ctx, op); err != nil {
		return err
	}
	if op, err = s.Boxes.ReleaseBox(ctx, owner, "grey-ridge", ""); err != nil {
		return err
	}
	if _, err = s.Wait(ctx, op); err != nil {
		return err
	}
	// The release moved it to the trash; emptied, it is released.
	if op, err = s.Boxes.EmptyTrash(ctx, owner, "grey-ridge", ""); err != nil {
		return err
	}
	if _, err = s.Wait(ctx, op); err != nil {
		return err
	}
	return nil
}

// seedBriskLakeRestored restores brisk-lake to its clean install, which
// leaves an undo and the page's notice.
func (s *Stack) seedBriskLakeRestored(ctx context.Context) error {
	owner := snapshots.Owner()
	list, err := s.Core.List(ctx, owner, snapshots.ListQuery{Box: "brisk-lake"})
	if err != nil {
		return err
	}
	var clean string
	for _, sn := range list[0].Snapshots {
		if sn.Name == "clean install" {
			clean = sn.ID
		}
	}
	op, err := s.Restores.Restore(ctx, owner, snapshots.RestoreRequest{Box: "brisk-lake", Snapshot: clean})
	if err != nil {
		return err
	}
	if op, err = s.Wait(ctx, op); err != nil {
		return err
	}
	if op.State != snapshots.OpDone {
		return fmt.Errorf("demo restore: %s", deref(op.Error))
	}
	return nil
}

// SlowBox makes a running box whose process ignores SIGTERM, so a restore
// of it waits at its stop step until the stack's StopTimeout: the box's
// operation queue stays busy meanwhile.
func (s *Stack) SlowBox(ctx context.Context, name string) (*snapshots.Box, error) {
	b, err := s.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: name, Backend: "local",
		Command: "trap '' TERM; while :; do sleep 1; done"})
	if err != nil {
		return nil, err
	}
	if err := s.WriteFile(b, "data.txt", "slow\n"); err != nil {
		return nil, err
	}
	g := providers.Guest{Backend: b.BackendID, Kind: b.Kind, Host: b.Host, Ref: b.GuestRef, Generation: b.Generation}
	return b, s.Local.Start(ctx, g)
}

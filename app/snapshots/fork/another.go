package fork

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// A fork of a ready snapshot may be asked on another host than the one
// that owns its box, when every host reaches the snapshots' content (a
// content store): the new box lands on the host the fork is asked on, as a
// moved box does, owned by it, and the fork runs on that host's queue
// (ForkParams.RunsOn). Its plan there is the snapshot's own, as a released
// box's is: nothing is read from the source box's folder, which is on its
// own host. It runs with the source box's environment as the database
// recorded it, as a moved box does (forkSnapshot). A fork of the box as
// it is now needs the live box, so only its own host forks it.

// This is the host this process runs on, where a fork asked here lands.
func (s *Forks) This() string { return s.host }

// ownerElsewhere is the host that owns b when that is not this host, else
// "" (b is this host's, or no host's).
func (s *Forks) ownerElsewhere(ctx context.Context, b *snapshots.Box) (string, error) {
	owner, err := s.owner(ctx, b)
	if err != nil || owner == "" || owner == s.host || s.host == "" {
		return "", err
	}
	return owner, nil
}

// owner is the host that owns b, or "".
func (s *Forks) owner(ctx context.Context, b *snapshots.Box) (string, error) {
	owner, err := s.st.HostBoxOwner(ctx, s.st.Pool, b.ID)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && owner == nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the host that owns box %s: %w", b.Name, err)
	}
	return *owner, nil
}

// runsOn is where a fork of b asked here runs: this host when a host owns
// b (the new box lands here, whoever owns b), else any host.
func (s *Forks) runsOn(ctx context.Context, b *snapshots.Box) (operations.RunsOn, error) {
	owner, err := s.owner(ctx, b)
	if err != nil || owner == "" || s.host == "" {
		return operations.RunsOn{}, err
	}
	return operations.RunsOn{RunsOn: s.host}, nil
}

// checkElsewhere refuses a fork here of sn, a snapshot of b, which host
// owner owns, when this host cannot reach sn's content: b's backend keeps
// no content where every host reaches it (the move's words), or sn is not
// there yet (a snapshot from before the content store, which its host
// ships). Plan says it too, for the fork dialog and the API's check.
func (s *Forks) checkElsewhere(ctx context.Context, b *snapshots.Box, sn *snapshots.Snapshot, owner string) error {
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return err
	}
	if sc, ok := be.Snap.(providers.SharedContent); !ok || !sc.ContentShared() {
		if !ok && be.OneHost() {
			return refusal(snapshots.CodeCannot, oneHostForkWords(b.Name, owner, be.ID))
		}
		return refusal(snapshots.CodeCannot, snapshots.NotSharedWords(b.Name, owner))
	}
	if bf, ok := be.Snap.(providers.Backfill); ok {
		in, err := bf.InContentStore(ctx, snapshots.RefOf(sn, b))
		if err != nil {
			return fmt.Errorf("ask the content store for snapshot %s: %w", sn.Name, err)
		}
		if !in {
			return &snapshots.Refusal{Code: snapshots.CodeConflict, TryAgain: true, Words: notShippedWords(b.Name, sn.Name, owner)}
		}
	}
	return nil
}

// notHereNow refuses a fork of b as it is now asked on another host than
// b's owner, which alone holds the live box.
func (s *Forks) notHereNow(ctx context.Context, b *snapshots.Box) error {
	owner, err := s.ownerElsewhere(ctx, b)
	if err != nil || owner == "" {
		return err
	}
	return refusal(snapshots.CodeCannot, forkNowElsewhereWords(b.Name, owner))
}

// Plan is the fork's plan of snapshot ref of box boxRef as asked on this
// host, and the host that owns the box when that is another host: the
// backend's own plan (the core's Plan), or, for a box another host owns,
// a plan that forks the snapshot as it is, once this host reaches its
// content (else checkElsewhere's refusal). The fork dialog and the API's
// check of a fork read it.
func (s *Forks) Plan(ctx context.Context, c snapshots.Caller, boxRef, ref string) (*snapshots.Box, *snapshots.Snapshot, providers.SnapshotPlan, string, error) {
	b, sn, plan, err := s.k.Plan(ctx, c, boxRef, ref)
	if b == nil || sn == nil {
		return b, sn, plan, "", err
	}
	owner, oerr := s.ownerElsewhere(ctx, b)
	if oerr != nil {
		return b, sn, plan, "", oerr
	}
	if owner == "" {
		return b, sn, plan, "", err
	}
	return b, sn, providers.SnapshotPlan{Fork: providers.ForkPlan{OK: true}}, owner, s.checkElsewhere(ctx, b, sn, owner)
}

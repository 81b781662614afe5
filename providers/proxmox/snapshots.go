package proxmox

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Snapshot takes one snapshot: the guest's disk, and on QEMU its memory only
// when asked. It reads the config first (a lock refuses at once, with the
// host's command), keeps the task's UPID before it waits, and answers only
// once Proxmox says the task ended OK and the snapshot has no snapstate. A
// snapshot of which part exists returns ErrIncomplete.
func (b *Backend) Snapshot(ctx context.Context, g providers.Guest, take providers.SnapshotTake, rec providers.Recorder) (providers.SnapshotTaken, error) {
	var out providers.SnapshotTaken
	name, err := SnapshotName(take.Label.Snapshot)
	if err != nil {
		return out, err
	}
	conf, err := b.settled(ctx, g, rec)
	if err != nil {
		return out, err
	}
	if conf.Lock != "" {
		return out, &providers.LockedError{Lock: providers.Lock{Lock: conf.Lock, Fix: unlockWords(g)}}
	}
	if list, err := b.listSnapshots(ctx, g); err == nil {
		if sn := find(list, name); sn != nil {
			// Taken before a restart cut the wait short: answer it as a
			// take would have, or as incomplete.
			if sn.SnapState != "" {
				return out, fmt.Errorf("snapshot %s of %s has snapstate %s: %w", name, g.Ref, sn.SnapState, providers.ErrIncomplete)
			}
			return takenOf(sn, conf, name), nil
		}
	}
	label := take.Label
	label.ResetVersion = resetVersion(str(conf.raw["tags"]))
	params := map[string]any{"snapname": name, "description": Describe(label)}
	if take.Memory {
		if g.Kind != KindQEMU {
			return out, fmt.Errorf("%s's snapshots hold the disk only: %w", g.Kind, providers.ErrUnsupported)
		}
		params["vmstate"] = 1
	}
	upid, err := b.api.post(ctx, guestPath(g)+"/snapshot", params)
	if err != nil {
		return out, fmt.Errorf("take snapshot %s of %s: %w", name, g.Ref, err)
	}
	_, werr := b.api.wait(ctx, upid, rec)
	if werr != nil && (ctx.Err() != nil || errors.Is(werr, providers.ErrTaskPending)) {
		return out, werr // the core waits for the task; a resumed take finds the snapshot
	}
	list, lerr := b.listSnapshots(ctx, g)
	if werr != nil {
		var te *TaskError
		if errors.As(werr, &te) {
			if le := lockError(g, te.ExitStatus); le != nil {
				return out, le
			}
			if lerr == nil {
				if sn := find(list, name); sn != nil {
					return out, fmt.Errorf("%s: %w (snapstate %s)", te.Error(), providers.ErrIncomplete, sn.SnapState)
				}
			}
		}
		return out, fmt.Errorf("take snapshot %s of %s: %w", name, g.Ref, werr)
	}
	if lerr != nil {
		return out, fmt.Errorf("confirm snapshot %s of %s: %w", name, g.Ref, lerr)
	}
	sn := find(list, name)
	switch {
	case sn == nil:
		return out, fmt.Errorf("Proxmox's task ended OK but %s has no snapshot %s", g.Ref, name)
	case sn.SnapState != "":
		return out, fmt.Errorf("snapshot %s of %s has snapstate %s: %w", name, g.Ref, sn.SnapState, providers.ErrIncomplete)
	}
	return takenOf(sn, conf, name), nil
}

func takenOf(sn *pveSnapshot, conf guestConfig, name string) providers.SnapshotTaken {
	holds := providers.HoldsDisk
	if sn.VMState == 1 {
		holds = providers.HoldsDiskAndMemory
	}
	return providers.SnapshotTaken{Ref: name, Storage: conf.Storage, CapturedAt: time.Unix(sn.SnapTime, 0).UTC(), Holds: holds,
		ResetVersion: resetVersion(str(conf.raw["tags"])), Parent: sn.Parent}
}

// DeleteSnapshot deletes one snapshot; an incomplete one (snapstate) is
// deleted with force, which finishes Proxmox's own clean-up. A snapshot
// already gone is a success. A locked guest refuses with the host's command.
func (b *Backend) DeleteSnapshot(ctx context.Context, ref providers.SnapshotRef, rec providers.Recorder) error {
	g := ref.Guest
	if ref.Where == "held-copy" {
		// A held copy is a guest of its own: deleting it deletes the copy.
		return b.dropCopy(ctx, g, rec)
	}
	list, err := b.listSnapshots(ctx, g)
	if errors.Is(err, providers.ErrNotFound) {
		return nil // the guest is gone, and its snapshots with it
	}
	if err != nil {
		return err
	}
	sn := find(list, ref.Ref)
	if sn == nil {
		return nil
	}
	path := guestPath(g) + "/snapshot/" + ref.Ref
	if sn.SnapState != "" {
		path += "?force=1"
	}
	if err := b.api.del(ctx, path); err != nil {
		return fmt.Errorf("delete snapshot %s of %s: %w", ref.Ref, g.Ref, err)
	}
	typ := "qmdelsnapshot"
	if g.Kind == KindLXC {
		typ = "vzdelsnapshot"
	}
	upid, err := b.delTask(ctx, g, typ)
	if err != nil {
		return fmt.Errorf("delete snapshot %s of %s: %w", ref.Ref, g.Ref, err)
	}
	if _, err := b.api.wait(ctx, upid, rec); err != nil {
		var te *TaskError
		if errors.As(err, &te) {
			if le := lockError(g, te.ExitStatus); le != nil {
				return le
			}
			if strings.Contains(te.ExitStatus, "does not exist") {
				return nil
			}
		}
		return fmt.Errorf("delete snapshot %s of %s: %w", ref.Ref, g.Ref, err)
	}
	return nil
}

// SetKeptUntil rewrites the snapshot's description with its keep date.
func (b *Backend) SetKeptUntil(ctx context.Context, ref providers.SnapshotRef, keptUntil *time.Time) error {
	if ref.Where == "held-copy" {
		return b.setCopyKeptUntil(ctx, ref.Guest, keptUntil)
	}
	list, err := b.listSnapshots(ctx, ref.Guest)
	if err != nil {
		return err
	}
	sn := find(list, ref.Ref)
	if sn == nil {
		return fmt.Errorf("snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, providers.ErrNotFound)
	}
	l, ok := ParseLabel(sn.Description)
	if !ok {
		return fmt.Errorf("snapshot %s of %s has no boxsnap label", ref.Ref, ref.Guest.Ref)
	}
	l.KeptUntil = keptUntil
	if _, err := b.api.put(ctx, guestPath(ref.Guest)+"/snapshot/"+ref.Ref+"/config", map[string]any{"description": Describe(l)}); err != nil {
		if le := lockError(ref.Guest, err.Error()); le != nil {
			return le
		}
		return fmt.Errorf("label snapshot %s of %s: %w", ref.Ref, ref.Guest.Ref, err)
	}
	return nil
}

// heldWorkers bounds the listings run at once.
const heldWorkers = 8

// HeldSnapshots lists every snapshot this install labelled: one listing of
// the cluster's guests, then at most one snapshot listing per guest. A node
// that does not answer is named in a *providers.HostsUnreachableError beside
// what the other nodes listed.
func (b *Backend) HeldSnapshots(ctx context.Context) ([]providers.HeldSnapshot, error) {
	guests, err := b.resources(ctx)
	if err != nil {
		return nil, err
	}
	type result struct {
		held []providers.HeldSnapshot
		host string
		err  error
	}
	jobs := make(chan resource)
	results := make(chan result)
	var wg sync.WaitGroup
	for range heldWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				h, err := b.heldOf(ctx, r)
				results <- result{held: h, host: r.Node, err: err}
			}
		}()
	}
	var cut []string
	go func() {
		for _, r := range guests {
			if r.Template == 1 || hasTag(r.Tags, HeldTag) {
				continue // held copies are listed below, from their labels
			}
			if r.Status == "unknown" {
				continue // its node does not answer; counted below
			}
			jobs <- r
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	seen := map[string]bool{}
	for _, r := range guests {
		if r.Status == "unknown" && !seen[r.Node] {
			seen[r.Node] = true
			cut = append(cut, r.Node)
		}
	}
	var out []providers.HeldSnapshot
	var firstErr error
	for r := range results {
		switch {
		case r.err == nil:
			out = append(out, r.held...)
		case errors.Is(r.err, providers.ErrUnreachable):
			if !seen[r.host] {
				seen[r.host] = true
				cut = append(cut, r.host)
			}
		case errors.Is(r.err, providers.ErrNotFound):
			// The guest went between the two listings.
		default:
			if firstErr == nil {
				firstErr = r.err
			}
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	copies, err := b.findCopies(ctx, guests, false)
	if err != nil && !errors.Is(err, providers.ErrUnreachable) {
		return nil, err
	}
	out = append(out, heldCopiesListed(copies)...)
	sort.Slice(out, func(i, j int) bool { return out[i].TakenAt.Before(out[j].TakenAt) })
	if len(cut) > 0 {
		sort.Strings(cut)
		return out, &providers.HostsUnreachableError{Hosts: cut}
	}
	return out, nil
}

func (b *Backend) heldOf(ctx context.Context, r resource) ([]providers.HeldSnapshot, error) {
	kind := KindQEMU
	if r.Type == "lxc" {
		kind = KindLXC
	}
	g := providers.Guest{Backend: b.cfg.ID, Kind: kind, Host: r.Node, Ref: strconv.Itoa(r.VMID)}
	list, err := b.listSnapshots(ctx, g)
	if err != nil {
		return nil, err
	}
	where := "current"
	if hasTag(r.Tags, EarlierTag) {
		where = "earlier" // a box's earlier guest, after a swap
	}
	var out []providers.HeldSnapshot
	for _, sn := range list {
		if sn.Name == "current" {
			continue
		}
		l, ok := ParseLabel(sn.Description)
		if !ok || l.Install != b.cfg.Install {
			continue
		}
		holds := providers.HoldsDisk
		if sn.VMState == 1 {
			holds = providers.HoldsDiskAndMemory
		}
		h := providers.HeldSnapshot{Ref: providers.SnapshotRef{ID: l.Snapshot, Ref: sn.Name, Guest: g, Where: where},
			Label: l, Host: r.Node, TakenAt: time.Unix(sn.SnapTime, 0).UTC(), Holds: holds, Parent: sn.Parent}
		if sn.SnapState != "" {
			h.Incomplete = true
			h.Error = fmt.Sprintf("Proxmox left it with snapstate %s", sn.SnapState)
		}
		out = append(out, h)
	}
	return out, nil
}

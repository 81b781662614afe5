package hosts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// Backfill ships, on this host, at most BackfillPerRun of the snapshots it
// took before the content store was set, oldest first, and answers how
// many it shipped and how many are left.
func (h *Hosts) Backfill(ctx context.Context) (shipped, left int, err error) {
	var errs []error
	for _, be := range h.k.Backends() {
		bf, ok := be.Snap.(providers.Backfill)
		if !ok {
			continue
		}
		s, l, err := bf.ShipUnshipped(ctx, BackfillPerRun-shipped)
		shipped, left = shipped+s, left+l
		if err != nil {
			errs = append(errs, fmt.Errorf("ship %s's snapshots from before the content store: %w", be.ID, err))
		}
	}
	return shipped, left, errors.Join(errs...)
}

// Unshipped counts the snapshots on this host not in the content store
// yet: taken before it was set, they wait for the backfill.
func (h *Hosts) Unshipped(ctx context.Context) (int, error) {
	n := 0
	for _, be := range h.k.Backends() {
		if bf, ok := be.Snap.(providers.Backfill); ok {
			c, err := bf.UnshippedSnapshots(ctx)
			if err != nil {
				return n, fmt.Errorf("count %s's snapshots not in the content store: %w", be.ID, err)
			}
			n += c
		}
	}
	return n, nil
}

// shipped refuses, in words, to carry b over from sn while sn is not in
// the content store: one taken before the store was set is on its host
// alone until that host's backfill ships it.
func (h *Hosts) shipped(ctx context.Context, b *snapshots.Box, be snapshots.Backend, sn *snapshots.Snapshot, from string) error {
	bf, ok := be.Snap.(providers.Backfill)
	if !ok {
		return nil
	}
	in, err := bf.InContentStore(ctx, snapshots.RefOf(sn, b))
	if err != nil {
		return fmt.Errorf("ask the content store for snapshot %s: %w", sn.Name, err)
	}
	if !in {
		return &snapshots.Refusal{Code: snapshots.CodeConflict, Words: notShippedWords(b.Name, sn.Name, from, h.backfillEvery), TryAgain: true}
	}
	return nil
}

// Backlog is what the Hosts page says of this host's snapshots not in the
// content store yet (UnshippedWords), or "" when no backend keeps its
// snapshots where every host reaches them.
func (h *Hosts) Backlog(ctx context.Context) (string, error) {
	shared := false
	for _, be := range h.k.Backends() {
		if sc, ok := be.Snap.(providers.SharedContent); ok && sc.ContentShared() {
			shared = true
		}
	}
	if !shared {
		return "", nil
	}
	n, err := h.Unshipped(ctx)
	if err != nil {
		return "", err
	}
	return UnshippedWords(n, h.backfillEvery), nil
}

// UseBackfillEvery tells the hosts how often each host's own work is
// queued (BOXSNAP_HOSTS_INTERVAL), for the words that say when a snapshot
// from before the content store ships; BackfillEvery until it is called.
func (h *Hosts) UseBackfillEvery(every time.Duration) { h.backfillEvery = every }

package main

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/contentledger"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
)

// waste deletes the first snapshot, lets every claim run out (as the
// ledger's grace passing would), sweeps, and says what the packs then
// hold: the objects only the first snapshot named are freed, and their
// bytes stay as waste in packs that also hold the second's (a pack is
// never rewritten).
func (e *env) waste(b *local.Backend, g providers.Guest) error {
	ctx := context.Background()
	held, err := b.HeldSnapshots(ctx)
	if err != nil || len(held) < 2 {
		return fmt.Errorf("list the snapshots: %v", err)
	}
	first := held[0].Ref.Ref
	if err := b.DeleteSnapshot(ctx, providers.SnapshotRef{Ref: first, ID: first, Guest: g}, nil); err != nil {
		return err
	}
	for _, q := range []string{`UPDATE content_objects SET claimed_until = NULL`, `UPDATE content_packs SET claimed_until = NULL`} {
		if _, err := e.pool.Exec(ctx, q); err != nil {
			return err
		}
	}
	bucket, err := objstore.Open(e.srv.Config("boxsnap", ""))
	if err != nil {
		return err
	}
	l := contentledger.New(e.pool)
	freed, err := l.Sweep(ctx, bucket)
	if err != nil {
		return err
	}
	packs, bytes, live, err := l.PackWaste(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("after the first snapshot was deleted and swept: %d objects and packs freed; %d packs, %.1f MB, of which %.1f MB (%.2f %%) freed objects' waste\n",
		freed, packs, float64(bytes)/1e6, float64(bytes-live)/1e6, 100*float64(bytes-live)/float64(max(bytes, 1)))
	return nil
}

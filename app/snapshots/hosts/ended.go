package hosts

import (
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// endLeftOps ends, failed, in words, the operations of box b that the gone
// host from left running (or unknown): no process of from will ever run
// them, and the restore that carries b over would wait behind them for
// good. An operation whose lock a live session holds runs somewhere alive
// and is left to it (from was not seen within SeenAliveFor, so none
// should); the lock is held while the operation ends, so no worker starts
// it meanwhile. A take's snapshot still being taken is failed with it.
func (h *Hosts) endLeftOps(ctx context.Context, c snapshots.Caller, b *snapshots.Box, from, to string) error {
	rows, err := h.st.HostBoxOpsUnended(ctx, h.st.Pool, &b.ID)
	if err != nil || len(rows) == 0 {
		if err != nil {
			return fmt.Errorf("read box %s's operations: %w", b.Name, err)
		}
		return nil
	}
	conn, err := h.st.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("end box %s's operations on host %s: %w", b.Name, from, err)
	}
	defer conn.Release()
	words := EndedGoneWords(from, to)
	for _, r := range rows {
		got, err := h.st.OpTryLock(ctx, conn, r.ID)
		if err != nil {
			return fmt.Errorf("end operation %s: %w", r.ID, err)
		}
		if !got {
			continue
		}
		op := operations.FromRow(r)
		err = h.k.Engine().End(ctx, op, operations.Failed, words, "")
		if err == nil {
			err = h.failTaking(ctx, op, words)
		}
		if _, uerr := h.st.OpUnlock(ctx, conn, r.ID); uerr != nil && err == nil {
			err = uerr
		}
		if err != nil {
			return fmt.Errorf("end operation %s of box %s: %w", r.ID, b.Name, err)
		}
		h.logger.Info("ended an operation its gone host left", "box", b.Name, "operation", r.ID, "kind", r.Kind, "host", from)
		h.k.Log(ctx, h.st.Pool, b.ID, EvEndedGone, c, logEndedGoneWords(r.Kind, from), "", r.ID, map[string]string{"from": from, "to": to})
	}
	return nil
}

// failTaking fails the snapshots op was taking (its take's, its restore's
// undo) that are still being taken: their take ended with op.
func (h *Hosts) failTaking(ctx context.Context, op *operations.Operation, words string) error {
	for _, id := range []*string{op.Target, op.UndoID} {
		if id == nil {
			continue
		}
		sn, err := h.k.SnapshotByID(ctx, h.st.Pool, *id)
		if err != nil || sn.State != snapshots.StateTaking {
			continue // gone, or taken or failed already
		}
		if err := h.k.MoveState(ctx, h.st.Pool, sn, snapshots.StateFailed, words); err != nil {
			return err
		}
	}
	return nil
}

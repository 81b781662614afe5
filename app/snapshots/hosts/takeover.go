package hosts

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// MarkGone marks the host name gone for good, the person's word that it
// will not come back, which a takeover of its boxes needs. It is refused in
// words for an agent, for a host that never ran boxsnap here, for this host
// and for a host seen alive within SeenAliveFor. A host already marked gone
// stays as it was.
func (h *Hosts) MarkGone(ctx context.Context, c snapshots.Caller, name string) (Host, error) {
	if !c.IsPerson() {
		return Host{}, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: personOnlyWords}
	}
	r, err := h.gone(ctx, name)
	if err != nil && !isNotGone(err) {
		return Host{}, err
	}
	if name == h.host {
		return Host{}, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: thisHostWords(name)}
	}
	if r.GoneAt == nil {
		at, by := h.now(), c.ByKind()
		if r, err = h.st.HostMarkGone(ctx, h.st.Pool, db.HostMarkGoneParams{Name: name, At: &at, By: &by}); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return Host{}, fmt.Errorf("mark host %s gone: %w", name, err)
		}
		if r, err = h.get(ctx, h.st.Pool, name); err != nil {
			return Host{}, err
		}
	}
	return h.view(ctx, r)
}

// errNotGone is a host not marked gone, which MarkGone goes on from.
var errNotGone = errors.New("not marked gone")

func isNotGone(err error) bool { return errors.Is(err, errNotGone) }

// gone reads the host name for a mark or a takeover: a refusal in words
// when it never ran boxsnap here or was seen alive within SeenAliveFor,
// errNotGone (with its row) when no one marked it gone.
func (h *Hosts) gone(ctx context.Context, name string) (db.Host, error) {
	r, err := h.get(ctx, h.st.Pool, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: unknownHostWords(name)}
	}
	if err != nil {
		return r, err
	}
	if ago := h.now().Sub(r.LastSeenAt); ago < SeenAliveFor {
		return r, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: stillAliveWords(name, ago)}
	}
	if r.GoneAt == nil {
		return r, errNotGone
	}
	return r, nil
}

// TakeOver carries the boxes of the host from, gone for good, over to the
// host to, which must be this host (empty is this host), each made here
// and restored from its newest
// ready snapshot, the box log saying so, once the operations from left
// running on it are ended in words (endLeftOps), since from will never
// finish them; a box whose snapshots to cannot
// reach, or that has none, is left on from, and the result says why. It is
// refused in words, changing nothing, for an agent, for a host seen alive
// within SeenAliveFor or not marked gone, and for a to that is not this
// host, never ran boxsnap here or is marked gone.
func (h *Hosts) TakeOver(ctx context.Context, c snapshots.Caller, from, to string) (*TakeOverResult, error) {
	if !c.IsPerson() {
		return nil, &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: personOnlyWords}
	}
	if to == "" {
		to = h.host
	}
	if to != h.host {
		return nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: takeOverOnTargetWords(from, to)}
	}
	if _, err := h.gone(ctx, from); isNotGone(err) {
		return nil, &snapshots.Refusal{Code: snapshots.CodeConflict, Words: notMarkedGoneWords(from)}
	} else if err != nil {
		return nil, err
	}
	if err := h.mayGoTo(ctx, to); err != nil {
		return nil, err
	}
	rows, err := h.st.HostBoxesOwned(ctx, h.st.Pool, &from)
	if err != nil {
		return nil, fmt.Errorf("read host %s's boxes: %w", from, err)
	}
	res := &TakeOverResult{From: from, To: to, Taken: []BoxMove{}, Left: []BoxMove{}}
	for _, r := range rows {
		b, err := h.k.Box(ctx, c, r.ID)
		if err != nil {
			return res, err
		}
		m := BoxMove{Box: b.ID, Name: b.Name}
		sn, err := h.carriable(ctx, b, from)
		if err == nil {
			err = h.endLeftOps(ctx, c, b, from, to)
		}
		if err == nil {
			var op *snapshots.Operation
			if op, err = h.carry(ctx, c, b, sn, from, to, EvTakenOver, logTakenOverWords(from, to, sn.Name)); err == nil {
				m.Snapshot, m.Operation = sn.ID, op.ID
				res.Taken = append(res.Taken, m)
				continue
			}
		}
		rf, ok := snapshots.AsRefusal(err)
		if !ok {
			return res, err
		}
		m.Why = leftWords(rf.Words)
		res.Left = append(res.Left, m)
	}
	return res, nil
}

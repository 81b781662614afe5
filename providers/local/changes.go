package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Changes answers from the box's change journal: a running box whose
// journal records changes since its last take against that take reads no
// folder. Where the journal cannot answer (boxsnap restarted, it
// overflowed, the folder is on a network file system) the box's folder is
// compared with the last take's manifest once, and where nothing changed the
// journal's record starts from that take again, so the next check is free.
// A stopped box answers what its journal said as it stopped; where no
// journal watched it stop, its folder is compared with the last take's
// manifest at each ask (a stopped box's folder can still change, from the
// host or by a restore, with no journal watching), so the local backend
// never answers unknown.
func (b *Backend) Changes(ctx context.Context, guest providers.Guest) (providers.ChangeCheck, error) {
	if err := store.CheckID("box", guest.Ref); err != nil {
		return providers.ChangeCheck{}, err
	}
	if _, err := b.existingBox(guest); err != nil {
		if errors.Is(err, providers.ErrNotFound) {
			return providers.ChangeCheck{}, nil
		}
		return providers.ChangeCheck{}, err
	}
	running, err := b.running(guest.Ref)
	if err != nil {
		return providers.ChangeCheck{}, fmt.Errorf("check box %s for changes: %w", guest.Ref, err)
	}
	if !running {
		b.Journals.Mu.Lock()
		at, ok := b.Journals.AtStop[guest.Ref]
		b.Journals.Mu.Unlock()
		// A box restored since its last take is compared with the
		// snapshot it was restored to, so the answer counts from the
		// restore, whatever its journal said as it stopped.
		st, err := b.ReadState(guest.Ref)
		if err != nil {
			return providers.ChangeCheck{}, fmt.Errorf("check box %s for changes: %w", guest.Ref, err)
		}
		if ok && at != providers.ChangedUnknown && st.StatCache == "" {
			return providers.ChangeCheck{Exists: true, Changed: at}, nil
		}
		// Nothing watched it as it stopped (boxsnap restarted, or its
		// process ended with the boxsnap process that owned it), or its
		// journal could not tell: its folder is compared with the last
		// take's manifest, so an unchanged box answers no.
		ch, err := b.ChangedSince(ctx, guest, false)
		if err != nil {
			return providers.ChangeCheck{}, err
		}
		out := providers.ChangeCheck{Exists: true, Changed: providers.ChangedNo, Walked: ch.Walked, Why: ch.Why, Paths: ch.Paths,
			Restored: ch.Restored, RestoredKnown: ch.Restored}
		if !ok {
			out.Why = "boxsnap did not watch the box as it stopped"
		}
		if ch.Changed {
			out.Changed = providers.ChangedYes
		}
		if ch.Walked {
			b.log.Info("local backend: the change check walked a stopped box's folder", "box", guest.Ref, "why", out.Why, "changed", ch.Changed)
		}
		return out, nil
	}
	b.Journals.Mu.Lock()
	delete(b.Journals.AtStop, guest.Ref)
	b.Journals.Mu.Unlock()
	ch, err := b.ChangedSince(ctx, guest, true)
	if err != nil {
		return providers.ChangeCheck{}, err
	}
	out := providers.ChangeCheck{Exists: true, Running: true, Changed: providers.ChangedNo, Walked: ch.Walked, Why: ch.Why, Paths: ch.Paths,
		Restored: ch.Restored, RestoredKnown: ch.Restored}
	if ch.Changed {
		out.Changed = providers.ChangedYes
	}
	if ch.Walked {
		b.log.Info("local backend: the change check walked the box's folder", "box", guest.Ref, "why", ch.Why, "changed", ch.Changed)
	}
	return out, nil
}

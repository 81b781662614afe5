package plans

import (
	"context"
	"errors"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// errNoReleases answers a release's dry run of plans not given the
// release checks.
var errNoReleases = errors.New("the plans were given no release checks")

// UseReleases gives the plans the release checks b, without which a
// release's and an emptying of the trash's dry runs are not answered.
func (p *Plans) UseReleases(b releases) { p.b = b }

// ReleaseDry is a release's or an emptying of the trash's dry run: what
// goes with the box, what stays, and where it goes first.
type ReleaseDry struct {
	Message string `json:"message"`
	DryRun  bool   `json:"dryRun"`
	Box     string `json:"box"`
	// Goes names its snapshots that go with it; Kept its kept snapshots,
	// which stay, listed under it as released, until their keep dates.
	Goes []string `json:"goes"`
	Kept []string `json:"kept"`
	// Keeps says until when each kept snapshot stays, in Kept's order.
	Keeps []KeptPast `json:"keeps"`
	// HeldCopies: the box's backend first makes a held copy of each kept
	// snapshot, so that it outlives the box.
	HeldCopies bool `json:"heldCopies,omitempty"`
	// TrashHours is how long the box waits in the trash first, restorable
	// with its history; 0 when it goes at once.
	TrashHours int `json:"trashHours"`
}

// KeptPast is a kept snapshot that outlives its box's release, and the
// keep date it stays until.
type KeptPast struct {
	Name  string    `json:"name"`
	Until time.Time `json:"until"`
}

// Release checks a release as the real one does (deleteKept: the person's
// "Release and delete it") and says what the release dialog says of it:
// the trash first, what goes and what stays, admitting nothing.
func (p *Plans) Release(ctx context.Context, c snapshots.Caller, ref string, deleteKept bool) (*ReleaseDry, error) {
	if p == nil {
		return nil, errNoPlans
	}
	if p.b == nil {
		return nil, errNoReleases
	}
	if err := p.b.Release(ctx, c, ref, deleteKept); err != nil {
		return nil, err
	}
	return p.releasePlan(ctx, c, ref, false, deleteKept)
}

// EmptyTrash checks an emptying of the trash as the real one does and says
// what goes with the box now and what stays, admitting nothing.
func (p *Plans) EmptyTrash(ctx context.Context, c snapshots.Caller, ref string) (*ReleaseDry, error) {
	if p == nil {
		return nil, errNoPlans
	}
	if p.b == nil {
		return nil, errNoReleases
	}
	if err := p.b.EmptyTrash(ctx, c, ref); err != nil {
		return nil, err
	}
	return p.releasePlan(ctx, c, ref, true, false)
}

// releasePlan says what a release of ref does that passed its checks:
// empty, a box's out of the trash, which comes first otherwise where the
// settings keep one; deleteKept, where kept snapshots not yet copied go
// too.
func (p *Plans) releasePlan(ctx context.Context, c snapshots.Caller, ref string, empty, deleteKept bool) (*ReleaseDry, error) {
	b, err := p.k.Box(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	list, err := p.k.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: b.ID})
	if err != nil {
		return nil, err
	}
	d := &ReleaseDry{DryRun: true, Box: b.Name, Goes: []string{}, Kept: []string{}, Keeps: []KeptPast{}}
	if len(list) > 0 {
		for _, sn := range list[0].Snapshots {
			if sn.Kept() && !deleteKept {
				d.Kept = append(d.Kept, sn.Name)
				d.Keeps = append(d.Keeps, KeptPast{Name: sn.Name, Until: *sn.KeptUntil})
			} else {
				d.Goes = append(d.Goes, sn.Name)
			}
		}
	}
	if be, ok := p.k.BackendOf(b); ok {
		sp := be.Snapshotting(b.Kind)
		d.HeldCopies = len(d.Kept) > 0 && sp != nil && sp.KeepsPastRelease == providers.KeepsHeldCopy
	}
	trashWords := ""
	if st, err := p.k.Settings(ctx); err == nil && !empty && !deleteKept && st.TrashHours > 0 {
		d.TrashHours = st.TrashHours
		if trashWords, err = p.b.ReleaseWords(ctx, b); err != nil {
			return nil, err
		}
	}
	d.Message = releaseDryWords(d, trashWords, empty, deleteKept)
	return d, nil
}

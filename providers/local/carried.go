package local

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// runOf is how the box of state st runs, and whether it runs, as a
// snapshot's label records it.
func runOf(st state.BoxState) *store.Run {
	return &store.Run{Kind: st.Kind, Command: st.Command, User: st.User, Limits: st.Limits,
		NoNetwork: st.NoNetwork, Publish: slices.Clone(st.Publish), Running: st.Running || st.Carried}
}

// carriedRun reads the run snapshot id's label records: nil when it
// records none, or the label cannot be read.
func (b *Shipping) carriedRun(id string) *store.Run {
	var lab store.Label
	if store.ReadChecked(filepath.Join(b.st.SnapDir(id), store.FileLabel), &lab) != nil {
		return nil
	}
	return lab.Run
}

// CarriedSpec answers how the box of snapshot ref ran when it was taken,
// and whether it ran (providers.Carried), read from its label: a snapshot
// this host does not hold is fetched from the content store first.
func (b *Shipping) CarriedSpec(ctx context.Context, ref providers.SnapshotRef) (providers.BoxSpec, bool, error) {
	m, err := b.st.LoadUsable(ref)
	if err != nil {
		return providers.BoxSpec{}, false, fmt.Errorf("read how snapshot %s's box ran: %w", store.SnapID(ref), err)
	}
	r := b.carriedRun(m.ID)
	if r == nil {
		return providers.BoxSpec{}, false, nil
	}
	return providers.BoxSpec{Box: providers.BoxIdentity{Kind: r.Kind}, Command: r.Command, User: r.User, Limits: r.Limits,
		NoNetwork: r.NoNetwork, Publish: slices.Clone(r.Publish), Ran: r.Running}, true, nil
}

// orCarried is src, the state of a fork's source box on this host, or,
// when this host holds no run of it (a snapshot another host took), the
// run r its snapshot's label records with env, the environment the core
// recorded for that box (which no label records), so a fork on any host
// runs as its source did.
func orCarried(src state.BoxState, r *store.Run, env map[string]string) state.BoxState {
	if src.Command != "" || src.User != "" || src.Env != nil || src.Limits != (providers.BoxLimits{}) {
		return src
	}
	src.Env = maps.Clone(env)
	if r != nil {
		src.Command, src.User, src.Limits, src.NoNetwork = r.Command, r.User, r.Limits, r.NoNetwork
	}
	return src
}

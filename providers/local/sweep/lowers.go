package sweep

import (
	"fmt"
	"os"
	"strings"

	"github.com/boxsnap/boxsnap/providers/local/overlay"
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// sweepLowers removes the shared trees forks lie over (package overlay)
// that no box's state names any more, and those a fork cut short left
// half written, answering the bytes it freed. A state it cannot read
// keeps every tree: it may name one. Called with the store lock held
// exclusive, so no fork is about to name a tree it removes.
func (b *Deletes) sweepLowers() (int64, error) {
	lowers := &overlay.Lowers{Store: b.Store}
	if len(lowers.Named()) == 0 {
		return lowers.Sweep(nil) // only trees half written, if any
	}
	ents, err := os.ReadDir(b.Path(store.DirState))
	if err != nil {
		return 0, fmt.Errorf("the boxes' states: %w", err)
	}
	states := &state.States{Store: b.Store}
	inUse := map[string]bool{}
	for _, e := range ents {
		box, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || store.CheckID("box", box) != nil {
			continue
		}
		st, err := states.ReadState(box)
		if err != nil {
			return 0, fmt.Errorf("the shared trees stay: %w", err)
		}
		if st.Lower != "" {
			inUse[st.Lower] = true
		}
	}
	return lowers.Sweep(inUse)
}

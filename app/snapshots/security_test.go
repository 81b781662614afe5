package snapshots_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
)

// TestSettingsCacheCopies: what Settings hands out is the caller's own copy,
// from the cache or from the database: a handler writing into its ceilings
// changes nothing another reader sees (run with -race, readers and writers
// at once are clean). A ceiling of NaN or infinity is refused in words and
// saves nothing.
func TestSettingsCacheCopies(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	st := snapshots.DefaultSettings()
	st.Ceilings = map[string]float64{"local": 5}
	if err := e.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // the first read fills the cache, the next ones read it
		got, err := e.Core.Settings(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Ceilings["local"] != 5 {
			t.Fatalf("read %d: the ceiling is %v: an earlier reader's change leaked", i, got.Ceilings["local"])
		}
		got.Ceilings["local"] = -1
		got.Ceilings["other"] = 7
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				got, err := e.Core.Settings(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				got.Ceilings["local"]++
			}
		})
	}
	wg.Wait()
	if got, _ := e.Core.Settings(ctx); got.Ceilings["local"] != 5 || len(got.Ceilings) != 1 {
		t.Fatalf("after readers changed their copies, the settings read %v", got.Ceilings)
	}

	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		st.Ceilings = map[string]float64{"local": bad}
		err := e.Core.SaveSettings(ctx, snapshots.Owner(), st)
		if r, ok := snapshots.AsRefusal(err); !ok || r.Words != "The ceiling for local is a number of dollars." {
			t.Fatalf("a ceiling of %v: %v", bad, err)
		}
	}
	if got, _ := e.Core.Settings(ctx); got.Ceilings["local"] != 5 {
		t.Fatalf("a refused save changed the ceiling to %v", got.Ceilings["local"])
	}
}

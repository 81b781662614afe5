package sweeps_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// BenchmarkIdleHistory50 measures what 50 idle running boxes with
// automatic history on cost boxsnap: one op is what the periodic jobs do in
// one 15-second period, the automatic check of every box and a quarter of a
// thinning (thinning runs every minute). Each box has 20 automatic
// snapshots. It reports boxsnap's own CPU (this process, not PostgreSQL's)
// per period as cpu-ms/op, and that CPU as a share of one core over any
// span: pct-core (the aim is under 2%).
func BenchmarkIdleHistory50(b *testing.B) {
	// Each check comes a cadence (15 s) after the one before, so every box
	// is due.
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	e := coretest.New(b, coretest.Options{Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	ctx := context.Background()
	for i := range 50 {
		box := e.Box(b, snapshots.Owner(), fmt.Sprintf("idle-%02d", i))
		g := providers.Guest{Backend: "local", Kind: box.Kind, Ref: box.GuestRef}
		if err := e.Local.Start(ctx, g); err != nil {
			b.Fatal(err)
		}
		dir := e.Local.BoxDir(g)
		for j := range 20 {
			if err := os.WriteFile(filepath.Join(dir, "work.txt"), fmt.Appendf(nil, "change %d", j), 0o644); err != nil {
				b.Fatal(err)
			}
			op, _, err := e.Take.TakeAutomatic(ctx, box.ID, "the box changed")
			if err != nil {
				b.Fatal(err)
			}
			e.Wait(b, op)
		}
	}
	// Settle: the first check after the takes finds nothing changed.
	clock.Add(int64(15 * time.Second))
	rep, err := e.Sweeps.CheckAutomatic(ctx)
	if err != nil || len(rep.Taken) != 0 || rep.Walked != 0 {
		b.Fatalf("the settling check: %+v %v", rep, err)
	}
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clock.Add(int64(15 * time.Second))
		rep, err := e.Sweeps.CheckAutomatic(ctx)
		if err != nil || len(rep.Taken) != 0 || rep.Walked != 0 || rep.Checked != 50 {
			b.Fatalf("an idle check: %+v %v", rep, err)
		}
		if i%4 == 0 {
			if _, err := e.Sweeps.ThinHistory(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	per := cpu / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "cpu-ms/op")
	b.ReportMetric(100*per.Seconds()/(15*time.Second).Seconds(), "pct-core")
}

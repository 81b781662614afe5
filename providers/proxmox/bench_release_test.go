package proxmox_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// BenchmarkRelease measures a release of a box with 3 kept snapshots (each
// made a held copy, a full clone of 2 GiB used, before the guest goes) beside
// a plain release of the same box, on the simulator with the task times
// measured on Proxmox VE (a full LXC clone 9.3 s per 4 GiB used; other tasks
// 300 ms), polled at boxsnap's own pace (DefaultPollEvery): the release's
// time, and its API calls counted by pvesim.
//
//	go test -run '^$' -bench BenchmarkRelease -benchtime 3x ./providers/proxmox/
func BenchmarkRelease(b *testing.B) {
	for _, kept := range []int{0, 3} {
		name := "Plain"
		if kept > 0 {
			name = fmt.Sprintf("Kept%d", kept)
		}
		b.Run(name, func(b *testing.B) {
			e := newSim(b, simOpts{realistic: true, taskTime: 300 * time.Millisecond, pollEvery: proxmox.DefaultPollEvery})
			env := newCore(b, e, "", nil)
			ctx := context.Background()
			var calls map[string]int
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				box := fmt.Sprintf("bench-%d", i)
				bx, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: box, Kind: proxmox.KindLXC, Backend: "pve-lab", Template: itoa(lxcTmpl)})
				must(b, err)
				vmid, _ := strconv.Atoi(bx.GuestRef)
				must(b, e.sim.Write(vmid, 2*gib))
				for k := range 3 {
					sn := takeDone(b, env, snapshots.Owner(), box, fmt.Sprintf("s%d", k))
					if k < kept {
						keepDone(b, env, box, sn.ID)
					}
				}
				e.sim.ResetCalls()
				b.StartTimer()
				op, err := env.Boxes.ReleaseBox(ctx, snapshots.Owner(), box, "")
				must(b, err)
				if got := env.Wait(b, op); got.State != snapshots.OpDone {
					b.Fatalf("release: %s %s", got.State, deref(got.Error))
				}
				b.StopTimer()
				calls = e.sim.Calls()
			}
			total, table := benchCalls(calls)
			b.ReportMetric(float64(total), "calls/release")
			b.Logf("API calls of one release with %d kept snapshots:\n%s", kept, table)
			if n := len(heldCopies(b, e)); n != kept*b.N {
				b.Fatalf("%d held copies after %d releases, want %d", n, b.N, kept*b.N)
			}
		})
	}
}

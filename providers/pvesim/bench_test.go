package pvesim

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkListSnapshots measures one GET of a guest's snapshots over HTTPS
// (keep-alive), the call a reconcile sweep makes per guest.
func BenchmarkListSnapshots(b *testing.B) {
	e := setup(b, frozen())
	req, _ := http.NewRequest("GET", e.base+apiPrefix+"/nodes/pve-1/lxc/101/snapshot", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+adminToken+"="+testSecret)
	b.ResetTimer()
	for b.Loop() {
		resp, err := e.hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("list: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body) // so the connection is reused
		resp.Body.Close()
	}
}

// BenchmarkSnapshotCycle measures take, commit and delete of one snapshot
// through the API, with the clock moved between them.
func BenchmarkSnapshotCycle(b *testing.B) {
	e := setup(b, frozen())
	b.ResetTimer()
	for b.Loop() {
		up := e.call(b, adminToken, "POST", "/nodes/pve-1/lxc/101/snapshot", form("snapname", "bench"))
		e.sim.Advance(DefaultTaskDuration)
		del := e.call(b, adminToken, "DELETE", "/nodes/pve-1/lxc/101/snapshot/bench", nil)
		e.sim.Advance(DefaultTaskDuration)
		if up.status != http.StatusOK || del.status != http.StatusOK {
			b.Fatalf("cycle: %d %d", up.status, del.status)
		}
	}
}

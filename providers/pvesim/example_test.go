package pvesim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/providers/pvesim"
)

// Example starts a simulator with the demo cluster, takes a snapshot with
// the demo token over verified HTTPS, and moves the clock so the task ends.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim, err := pvesim.New(pvesim.Config{StartTime: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		panic(err)
	}
	if err := sim.SeedDemo("demo-secret"); err != nil {
		panic(err)
	}
	base, err := sim.Start(ctx)
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: sim.TLSConfig()}}

	req, _ := http.NewRequest("POST", base+"/api2/json/nodes/pve-1/lxc/214/snapshot?snapname=before-upgrade", nil)
	req.Header.Set("Authorization", "PVEAPIToken="+pvesim.DemoTokenID+"=demo-secret")
	resp, err := client.Do(req)
	if err != nil {
		panic(err)
	}
	var answer struct{ Data string }
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	fmt.Println(resp.Status)

	g, _ := sim.Guest(214)
	fmt.Println("while the task runs:", g.Lock, g.Snapshots[0].SnapState)
	sim.Advance(time.Second)
	g, _ = sim.Guest(214)
	fmt.Println("after:", g.Parent, len(g.Snapshots))
	// Output:
	// 200 OK
	// while the task runs: snapshot prepare
	// after: before-upgrade 1
}

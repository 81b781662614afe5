package fork_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	forks "github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/providers"
)

// TestForkManyNameTakenBeforeItRuns: a fork into three is admitted with
// its names free; before its forks run, another thread makes a box named
// fix-2 and the caller's own thread one named fix-3. fix-1 is made; fix-2
// and fix-3 each fail on their own, fix-2 without saying a box holds the
// name (another thread's names stay its own), fix-3 naming the box, and
// neither's words show the database's; nothing of either is left on the
// backend.
func TestForkManyNameTakenBeforeItRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := coretest.New(t, coretest.Options{NoWorkers: true})
	_, agent, _ := e.Thread(t, "Fork three")
	_, other, _ := e.Thread(t, "Another thread")
	e.Box(t, agent, "amber-fox")
	sn := e.AdmitReady(t, agent, "amber-fox", "one")
	ops, err := e.Forks.ForkMany(ctx, agent, forks.ForkManyRequest{Box: "amber-fox", Snapshot: sn.ID, Name: "fix", Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	e.Box(t, other, "fix-2")
	e.Box(t, agent, "fix-3")

	want := map[string]string{
		"fix-1": "",
		"fix-2": "The name fix-2 cannot be used: choose another.",
		"fix-3": snapshots.BoxExistsWords("fix-3"),
	}
	for _, op := range ops {
		if err := e.Core.RunOperation(ctx, op.ID); err != nil {
			t.Fatal(err)
		}
		done, err := e.Core.Operation(ctx, snapshots.Owner(), op.ID)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Forks.Kinds().Fork.Params(done)
		if err != nil {
			t.Fatal(err)
		}
		words := coretest.Deref(done.Error)
		if want[p.Name] == "" {
			if done.State != snapshots.OpDone {
				t.Fatalf("%s ended %s: %s", p.Name, done.State, words)
			}
			continue
		}
		if done.State != snapshots.OpFailed || !strings.Contains(words, want[p.Name]) {
			t.Errorf("%s ended %s saying %q, want failed saying %q", p.Name, done.State, words, want[p.Name])
		}
		for _, sql := range []string{"duplicate", "constraint", "SQLSTATE", "boxes_live_name"} {
			if strings.Contains(words, sql) {
				t.Errorf("%s's failure shows the database's words: %q", p.Name, words)
			}
		}
		if p.Name == "fix-2" && strings.Contains(words, "exists") {
			t.Errorf("fix-2's failure says another thread's box exists: %q", words)
		}
		dir := e.Local.BoxDir(providers.Guest{Ref: p.BoxID})
		if _, err := os.Lstat(dir); err == nil {
			t.Errorf("%s failed and left its folder %s", p.Name, dir)
		}
		if _, err := os.Lstat(e.Local.ImageFile(p.BoxID)); err == nil {
			t.Errorf("%s failed and left its disk image", p.Name)
		}
	}
}

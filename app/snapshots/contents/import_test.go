package contents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
)

// TestImportResumesAfterPublish kills the worker process (SIGKILL, as a
// crash) right after the backend published an import's snapshots, before
// their records were written, then starts another worker: the import
// operation resumes from its recorded step, publishing again is a no-op,
// and it ends done with the box and every record written once, the
// snapshots the person's (not "found" by a reconcile), and the staged file
// removed. A repeat of its request ID answers the same operation.
func TestImportResumesAfterPublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	// The sending install: a box with two snapshots, exported.
	from, err := coretest.Build(ctx, dbtest.New(t), coretest.Options{LocalRoot: t.TempDir(), NoWorkers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(from.Stop) // its boxes' file systems unmounted, so its folder goes
	box := from.Box(t, snapshots.Owner(), "amber-fox")
	file := filepath.Join(from.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "state.txt")
	write(t, file, "v1")
	first := from.AdmitReady(t, snapshots.Owner(), "amber-fox", "first")
	write(t, file, "v2")
	second := from.AdmitReady(t, snapshots.Owner(), "amber-fox", "second")
	ex, err := from.Contents.PlanExport(ctx, snapshots.Owner(), contents.ExportRequest{Box: "amber-fox", Snapshots: []string{"first", "second"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := ex.WriteTo(ctx, &buf); err != nil {
		t.Fatal(err)
	}

	// The receiving install: its core admits; worker processes run.
	e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{})
	marker := filepath.Join(t.TempDir(), "stalled")
	w := startWorker(t, dsn, root, "after:import", marker)
	st, err := e.Contents.Stage(ctx, "amber-fox.boxsnap", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Remove()
	op, err := e.Contents.AdmitImport(ctx, snapshots.Owner(), []*contents.Staged{st}, "import-1")
	if err != nil {
		t.Fatal(err)
	}
	if op.Kind != snapshots.OpImport {
		t.Fatalf("the import's operation is a %s", op.Kind)
	}
	var p struct {
		Files []struct {
			Dir string `json:"dir"`
		} `json:"files"`
	}
	if err := json.Unmarshal(op.Params, &p); err != nil || len(p.Files) != 1 || p.Files[0].Dir == "" {
		t.Fatalf("the import's params name no staged file: %s (%v)", op.Params, err)
	}
	staged := p.Files[0].Dir
	st.Remove() // the operation owns the staged file now: this removes nothing
	if _, err := os.Stat(staged); err != nil {
		t.Fatalf("the staged file went before its import ran: %v", err)
	}

	w.WaitFile(t, marker)
	w.Kill()
	cut, err := e.Core.Operation(ctx, snapshots.Owner(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cut.State != snapshots.OpRunning || cut.Step != snapshots.StepPublish {
		t.Fatalf("after the kill the import is %s at %s, want running at %s", cut.State, cut.Step, snapshots.StepPublish)
	}
	held, err := e.Local.HeldSnapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var records int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM snapshots").Scan(&records); err != nil {
		t.Fatal(err)
	}
	if len(held) != 2 || records != 0 {
		t.Fatalf("after the kill the backend holds %d snapshots and there are %d records, want 2 published and none recorded", len(held), records)
	}
	// A reconcile meanwhile leaves them to the import: not "found".
	if rep, err := e.Sweeps.Reconcile(ctx); err != nil || rep.Found+rep.Recorded+rep.Kept != 0 {
		t.Fatalf("a reconcile during the import recorded its snapshots: %+v %v", rep, err)
	}
	coretest.WaitNoAdvisoryLocks(t, pool)

	startWorker(t, dsn, root, "", "")
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	done, err := e.Core.Wait(wctx, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != snapshots.OpDone {
		t.Fatalf("after the restart the import ended %s at %s: %s", done.State, done.Step, coretest.Deref(done.Error))
	}
	if done.Resumes < 1 {
		t.Fatalf("the import ended done with %d resumes: it was not resumed", done.Resumes)
	}
	res, err := e.Contents.ImportResultOf(done)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Made || res.BoxName != "amber-fox" || len(res.Snapshots) != 2 || res.Snapshots[0].Already || res.Snapshots[1].Already {
		t.Fatalf("the import answered %+v", res)
	}
	if want := "Imported 2 snapshots into amber-fox. amber-fox is a new box here, made from ‘second’."; res.Words != want {
		t.Fatalf("the import says %q, want %q", res.Words, want)
	}

	// Nothing twice: two snapshots published, two records, the person's,
	// with their IDs and ancestry; one box; one import in its log.
	if held, err = e.Local.HeldSnapshots(ctx); err != nil || len(held) != 2 {
		t.Fatalf("the backend holds %d snapshots (%v), want 2", len(held), err)
	}
	all := names(t, e, "amber-fox")
	if len(all) != 2 || all["first"] == nil || all["second"] == nil {
		t.Fatalf("the records after the import: %v", keys(all))
	}
	if all["first"].ID != first.ID || all["second"].ID != second.ID {
		t.Fatalf("the records' IDs changed: %s %s, want %s %s", all["first"].ID, all["second"].ID, first.ID, second.ID)
	}
	if all["second"].ParentID == nil || *all["second"].ParentID != first.ID {
		t.Fatalf("the second snapshot's parent is %v, want %s", all["second"].ParentID, first.ID)
	}
	for _, sn := range all {
		if sn.OwnerKind != "person" || sn.State != snapshots.StateReady {
			t.Fatalf("the imported ‘%s’ is %s, owned by %s; want ready, the person's", sn.Name, sn.State, sn.OwnerKind)
		}
	}
	var boxes, imported, made int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM boxes").Scan(&boxes); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FILTER (WHERE kind = $1), count(*) FILTER (WHERE kind = $2) FROM box_log", contents.EvImported, snapshots.EvMade).Scan(&imported, &made); err != nil {
		t.Fatal(err)
	}
	if boxes != 1 || imported != 1 || made != 1 {
		t.Fatalf("after the import there are %d boxes, %d imports and %d makes in the log, want 1, 1, 1", boxes, imported, made)
	}
	b, err := e.Core.Box(ctx, snapshots.Owner(), "amber-fox")
	if err != nil || b.State != "ready" {
		t.Fatalf("the imported box: %+v %v", b, err)
	}
	if _, err := os.Stat(staged); !os.IsNotExist(err) {
		t.Fatalf("the staged file outlived its import: %v", err)
	}

	// A repeat of the request is the same import.
	again, err := e.Contents.AdmitImport(ctx, snapshots.Owner(), []*contents.Staged{st}, "import-1")
	if err != nil || again.ID != op.ID {
		t.Fatalf("a repeated request answered %v, %v; want operation %s", again, err, op.ID)
	}
}

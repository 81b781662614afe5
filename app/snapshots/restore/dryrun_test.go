package restore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/restore"
	"github.com/boxsnap/boxsnap/providers"
)

// writeTree writes files (path: content) into dir, making folders.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRestoreDryRunChangesNothing asks for a restore with dry_run: it
// answers what would change and the plan's words, and records no operation,
// queues no job, takes no undo and leaves the files as they are.
func TestRestoreDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	e := coretest.New(t, coretest.Options{})
	ctx := context.Background()
	_, agent, _ := e.Thread(t, "Fix the sign-in flow")
	b := e.Box(t, agent, "amber-fox")
	dir := e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	writeTree(t, dir, map[string]string{"a.txt": "before\n", "b.txt": "b\n"})
	sn := e.TakeReady(t, agent, b.Name, "before")
	writeTree(t, dir, map[string]string{"a.txt": "after!\n", "c.txt": "c\n"})

	count := func(q string) int {
		var n int
		if err := e.Pool.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The jobs counted leave out the periodic sweeps: River's leader queues
	// them on its own clock (the recovery and the sessions' housekeeping as
	// soon as it is elected, which under load can fall mid-test).
	const jobsQuery = "SELECT count(*) FROM river_job WHERE kind <> 'sweep'"
	ops, jobs, snaps, logs := count("SELECT count(*) FROM operations"), count(jobsQuery),
		count("SELECT count(*) FROM snapshots"), count("SELECT count(*) FROM box_log")

	dry, err := e.Restores.RestoreDryRun(ctx, agent, snapshots.RestoreRequest{Box: b.Name, Snapshot: "before"})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Changes == nil || dry.Changes.Words != "1 file changed, 1 added, 0 removed since then" {
		t.Fatalf("dry run's changes %+v", dry.Changes)
	}
	words := restore.DryRunWords(dry)
	wantWords := "A restore of amber-fox to ‘before’ would first take an undo, then put back everything on its disk as it was then. " +
		"1 file changed, 1 added, 0 removed since then. Nothing changed: this was a dry run."
	if words != wantWords {
		t.Fatalf("dry run says\n%s\nwant\n%s", words, wantWords)
	}
	if got := [4]int{count("SELECT count(*) FROM operations"), count(jobsQuery),
		count("SELECT count(*) FROM snapshots"), count("SELECT count(*) FROM box_log")}; got != [4]int{ops, jobs, snaps, logs} {
		t.Fatalf("a dry run changed the records: operations, jobs, snapshots, log %v, before %v", got, [4]int{ops, jobs, snaps, logs})
	}
	for p, want := range map[string]string{"a.txt": "after!\n", "b.txt": "b\n", "c.txt": "c\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(got) != want {
			t.Fatalf("after a dry run %s holds %q, %v", p, got, err)
		}
	}
	// A dry run still says no where the restore would: a snapshot of
	// another thread reads as not found.
	_, other, _ := e.Thread(t, "Another thread")
	_, err = e.Restores.RestoreDryRun(ctx, other, snapshots.RestoreRequest{Box: b.Name, Snapshot: sn.ID})
	coretest.RefusedWith(t, err, "No snapshot "+sn.ID+" that you can see.")
}

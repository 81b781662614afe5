package proxmox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// logIndex is the position of the first event of kind in a box log read
// oldest first, or -1.
func logIndex(log []snapshots.LogEvent, kind string) int {
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].Kind == kind {
			return len(log) - 1 - i
		}
	}
	return -1
}

func logWords(log []snapshots.LogEvent, kind string) string {
	var out []string
	for _, e := range log {
		if e.Kind == kind {
			out = append(out, e.Words)
		}
	}
	return strings.Join(out, " | ")
}

// TestAccessFirst: a value of the box's access that changed after a take is
// the new one after a restore, before any other command boxsnap runs there:
// on the local backend the box's own command, started by the restore, reads
// .boxsnap/env as its first act; on Proxmox the guest's labels are written
// before its start task, so no command of the box runs with the old access.
func TestAccessFirst(t *testing.T) {
	t.Parallel()
	t.Run("Local", func(t *testing.T) {
		t.Parallel()
		e := newSim(t, simOpts{})
		// The data folder must let the box's user pass (chmod o+x).
		root := t.TempDir()
		for d := root; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
			must(t, os.Chmod(d, 0o711))
		}
		env := newCore(t, e, root, nil)
		ctx := context.Background()
		// The box's command: its first act at each start is to read its
		// access file, into a file of its own folder.
		cmd := "{ cat .boxsnap/env 2>/dev/null || echo none; } > started-with.txt; exec sleep 600"
		b, err := env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "brisk-lake", Kind: "linux", Backend: "local", Command: cmd})
		must(t, err)
		dir := env.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
		seen := filepath.Join(dir, "started-with.txt")
		// At the take, the box's access file named a thread that has left
		// since: a restore of a box threads run on is refused here, so the
		// access that changes after a take is one that went.
		must(t, os.MkdirAll(filepath.Join(dir, ".boxsnap"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ".boxsnap", "env"), []byte("BOXSNAP_BOX="+b.ID+"\nBOXSNAP_THREADS=th-gone-since-the-take\n"), 0o644))
		sn := takeDone(t, env, snapshots.Owner(), b.Name, "before")
		op, err := env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: b.Name, Snapshot: sn.ID})
		must(t, err)
		if got := env.Wait(t, op); got.State != snapshots.OpDone {
			t.Fatalf("restore: %s %s", got.State, deref(got.Error))
		}
		// The restore put back the file of the first start, written before
		// the access file was; the box's first command after the restore
		// writes it again, from the access file boxsnap set straight.
		var last string
		waitFor(t, "the box's command to read its access after the restore", func() bool {
			data, _ := os.ReadFile(seen)
			last = string(data)
			return strings.Contains(last, "BOXSNAP_GENERATION=")
		})
		if strings.Contains(last, "th-gone-since-the-take") || !strings.Contains(last, "BOXSNAP_BOX="+b.ID) {
			t.Fatalf("the box's first command after the restore read this access file:\n%s\nwant the box's access now, without the thread that left after the take", last)
		}
		log := boxLog(t, env, b.Name)
		if s, r := logIndex(log, snapshots.EvSetStraight), logIndex(log, snapshots.EvRestored); s < 0 || s > r {
			t.Fatalf("set straight at %d, restored at %d: the box was reported ready before its access came back", s, r)
		}
		if w := logWords(log, snapshots.EvSetStraight); !strings.Contains(w, "its access file brought back to what the box holds now") {
			t.Fatalf("the box log says %q", w)
		}
	})
	t.Run("Proxmox", func(t *testing.T) {
		t.Parallel()
		e := newSim(t, simOpts{})
		env := newCore(t, e, "", nil)
		c := adminClient(t, e.sim, e.url)
		ctx := context.Background()
		// A guest adopted before boxsnap labelled it: its tags at the take
		// lack boxsnap's.
		must(t, c.Put(ctx, map[string]any{"tags": "boxsnap-reset-1;team-a"}, fmt.Sprintf("/nodes/pve-1/lxc/%d/config", lxcThin)))
		b := adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
		sn := takeDone(t, env, snapshots.Owner(), "amber-fox", "before")
		restoreDone(t, env, "amber-fox", sn.ID)
		g, err := e.sim.Guest(lxcThin)
		must(t, err)
		want := fmt.Sprintf("boxsnap install %s box %s", install, b.ID)
		if g.Config["description"] != want || g.Config["tags"] != "boxsnap;boxsnap-reset-1;team-a" || !g.Running {
			t.Fatalf("after the restore: description %q tags %q running %v; want %q, boxsnap's tag beside the others", g.Config["description"], g.Config["tags"], g.Running, want)
		}
		log := boxLog(t, env, "amber-fox")
		if s, r := logIndex(log, snapshots.EvSetStraight), logIndex(log, snapshots.EvRestored); s < 0 || s > r {
			t.Fatalf("set straight at %d, restored at %d", s, r)
		}
		// The labels were written before the start: the start task is the
		// last task on the guest, after the config writes.
		op := lastOp(t, env, "amber-fox")
		if !strings.Contains(string(op.Task), ":vzstart:") {
			t.Fatalf("the restore's last task is %s, want the start, after the labels", op.Task)
		}
	})
}

func lastOp(t testing.TB, env *coretest.Env, box string) *snapshots.Operation {
	t.Helper()
	var id string
	must(t, env.Pool.QueryRow(context.Background(), "SELECT o.id FROM operations o JOIN boxes b ON b.id = o.box_id WHERE b.name = $1 ORDER BY o.seq DESC LIMIT 1", box).Scan(&id))
	op, err := env.Core.Operation(context.Background(), snapshots.Owner(), id)
	must(t, err)
	return op
}

// TestOutsideRestoreSetStraight: a rollback made on the host is logged
// restored-outside, then the box is set straight as after boxsnap's own
// restore.
func TestOutsideRestoreSetStraight(t *testing.T) {
	t.Parallel()
	e := newSim(t, simOpts{})
	env := newCore(t, e, "", nil)
	c := adminClient(t, e.sim, e.url)
	ctx := context.Background()
	must(t, c.Put(ctx, map[string]any{"tags": "boxsnap-reset-1"}, fmt.Sprintf("/nodes/pve-1/lxc/%d/config", lxcThin)))
	adopt(t, env, "amber-fox", proxmox.KindLXC, lxcThin)
	sn := takeDone(t, env, snapshots.Owner(), "amber-fox", "before")
	restoreDone(t, env, "amber-fox", sn.ID) // boxsnap's own: labels set straight
	if g, _ := e.sim.Guest(lxcThin); g.Config["tags"] != "boxsnap;boxsnap-reset-1" {
		t.Fatalf("after boxsnap's restore: tags %q", g.Config["tags"])
	}
	upid, err := e.sim.OutsideRollback(lxcThin, sn.Ref)
	must(t, err)
	waitFor(t, "the outside rollback", taskEnded(t, e, upid))
	if g, _ := e.sim.Guest(lxcThin); g.Config["tags"] != "boxsnap-reset-1" {
		t.Fatalf("the outside rollback left tags %q; want the snapshot's", g.Config["tags"])
	}
	if rep := scan(t, env); rep.Restored != 1 {
		t.Fatalf("scan: %+v; want one restored outside", rep)
	}
	g, _ := e.sim.Guest(lxcThin)
	if g.Config["tags"] != "boxsnap;boxsnap-reset-1" {
		t.Fatalf("after the restore made outside: tags %q; want boxsnap's back", g.Config["tags"])
	}
	log := boxLog(t, env, "amber-fox")
	if o, s := logIndex(log, snapshots.EvRestoredOutside), len(log)-1-0; o < 0 || !strings.Contains(log[0].Words, "after the restore made outside boxsnap: its tags") || s < o {
		t.Fatalf("the box log: %q then %q", logWords(log, snapshots.EvRestoredOutside), log[0].Words)
	}
}

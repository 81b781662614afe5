package snapshots_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	taking "github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// refusalLike marks an agent's restore that asked instead: like a refusal,
// it changes nothing on the box.
var refusalLike = errors.New("asked the person")

// The model test's sizes: make test's, and the nightly run's (-long).
const (
	modelOps     = 2000
	modelOpsLong = 10000
)

var longModel = flag.Bool("long", false, "run the nightly-sized model test (10,000 operations with kills)")

// TestModelRandomOperations runs thousands of random takes, deletes,
// restores, renames and keeps from several threads and the owner, executed by
// two worker processes (one of them killed and restarted now and then), with
// requests for the person's word among them: one box is a box a thread runs
// on (its agent's restores ask), "Agents may restore their own boxes" is
// switched off and on now and then (off, agents' restores ask), and the
// person approves, declines or lets requests expire (the core's clock moves
// past them). It checks after every operation the invariants of restores,
// operations and limits:
//   - a box holds at most its limit, undos apart, and at most 2 undos;
//   - nothing deletes a pinned, kept or owner's snapshot by itself: every
//     snapshot that goes without being asked was an agent's, unkept, and (for
//     the limit) of the asking thread, or (for a newer undo) an undo;
//   - every operation ends; a refusal changes nothing;
//   - the box log has an event for each change;
//   - no operation runs without the consent it needs: every agent's restore
//     of a box that needs the person's word carries the yes on its operation
//     and is the operation of an approved request; every operation with a yes
//     is an approved request's; no declined or expired request ever produced
//     an operation.
//
// make test runs 2,000 operations (about 8 kills); the nightly-sized run is
// -long, 10,000 operations with a kill every 250 (40 kills):
//
//	go test ./app/snapshots -run TestModelRandomOperations -long -timeout 60m
//
// BOXSNAP_MODEL_SEED replays a seed; BOXSNAP_MODEL_OPS sets the count;
// BOXSNAP_MODEL_KILL_EVERY kills a worker every that many operations (250).
func TestModelRandomOperations(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BOXSNAP_MODEL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	ops := modelOps
	if *longModel {
		ops = modelOpsLong
	}
	if s := os.Getenv("BOXSNAP_MODEL_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	killEvery := 250
	if s := os.Getenv("BOXSNAP_MODEL_KILL_EVERY"); s != "" {
		killEvery, _ = strconv.Atoi(s)
	}
	t.Logf("seed %d (replay with BOXSNAP_MODEL_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: "+format, append([]any{seed}, args...)...)
	}

	ctx := context.Background()
	// The core's clock: real time plus what the model moved it on by, to
	// let requests expire.
	var ahead atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	e, pool, dsn, root := coretest.WorkerCore(t, coretest.Options{Now: now})
	workers := []*coretest.Worker{startWorker(t, dsn, root, "", ""), startWorker(t, dsn, root, "", "")}

	callers := []snapshots.Caller{snapshots.Owner()}
	for i := 1; i <= 3; i++ {
		_, agent, _ := e.Thread(t, fmt.Sprintf("Thread %d", i))
		callers = append(callers, agent)
	}
	type boxInfo struct {
		name  string
		owner snapshots.Caller
		dir   string
	}
	var boxes []boxInfo
	for i := 0; i < 6; i++ {
		owner := callers[i%len(callers)]
		name := fmt.Sprintf("box-%d", i)
		b := e.Box(t, owner, name)
		boxes = append(boxes, boxInfo{name, owner, e.Local.BoxDir(providers.Guest{Ref: b.GuestRef})})
	}
	// The last box is one its owner's thread runs on: its agent's restores
	// ask the person, with the switch for them on.
	runsOn := boxes[len(boxes)-1]
	runsOnBox, err := e.Core.Box(ctx, snapshots.Owner(), runsOn.name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Boxes.SetPresence(ctx, snapshots.Owner(), runsOnBox.ID, snapshots.Presence{Workspaces: []snapshots.Workspace{
		{Thread: runsOn.owner.Thread, RunsOn: true}}}); err != nil {
		t.Fatal(err)
	}
	const approvalMinutes = 5
	e.SetSettings(t, func(st *snapshots.Settings) {
		st.ExecutionMachineRestores = true
		st.ApprovalMinutes = approvalMinutes
	})
	agentsMayRestore := true
	pending := map[string]string{}    // requests waiting for the person's word → their box
	approvedOp := map[string]string{} // operations admitted by approvals → their request
	closed := map[string]string{}     // declined or expired requests → their state

	// consentHolds checks that no operation ran without the consent it
	// needs, in the database.
	consentHolds := func(step int, action string) {
		var bad []string
		rows, err := pool.Query(ctx, `
			SELECT o.id || ' (' || o.kind || ' by ' || o.by_kind || ', consent ' || coalesce(nullif(o.consent, 'null'::jsonb)::text, 'none') || ')'
			FROM operations o
			WHERE (o.kind = 'restore' AND o.by_kind = 'agent' AND o.box_id = $1 OR nullif(o.consent, 'null'::jsonb) IS NOT NULL)
			  AND NOT EXISTS (SELECT 1 FROM approvals a WHERE a.operation_id = o.id AND a.state = 'approved'
			                  AND a.id = o.consent->>'request' AND a.box_id = o.box_id)
			UNION ALL
			SELECT 'request ' || a.id || ' (' || a.state || ') produced ' || coalesce(a.operation_id, o.id)
			FROM approvals a LEFT JOIN operations o ON o.request_key LIKE '%approval-' || a.id
			WHERE a.state IN ('declined', 'expired') AND (a.operation_id IS NOT NULL OR o.id IS NOT NULL)`, runsOnBox.ID)
		if err != nil {
			fail("op %d: consent check: %v", step, err)
		}
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				fail("op %d: consent check: %v", step, err)
			}
			bad = append(bad, b)
		}
		rows.Close()
		if len(bad) > 0 {
			fail("op %d (%s): operations without the consent they need: %v", step, action, bad)
		}
	}

	state := func(box string) map[string]*snapshots.Snapshot {
		all := map[string]*snapshots.Snapshot{}
		list, err := e.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: box})
		if err != nil {
			fail("list %s: %v", box, err)
		}
		for _, s := range list[0].Snapshots {
			all[s.ID] = s
		}
		return all
	}
	wait := func(op *snapshots.Operation) *snapshots.Operation {
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			got, err := e.Core.Wait(wctx, op.ID)
			cancel()
			if err != nil {
				fail("wait %s: %v", op.ID, err)
			}
			if got.State != snapshots.OpRunning {
				return got
			}
			// A killed worker's operation resumes on the other one.
			if _, err := e.Core.Recover(ctx); err != nil {
				fail("recover: %v", err)
			}
		}
		got, _ := e.Core.Operation(ctx, snapshots.Owner(), op.ID)
		var jobs []string
		rows, _ := pool.Query(ctx, "SELECT state || ' attempt ' || attempt || ' ' || coalesce(errors::text, '') FROM river_job WHERE args->>'op' = $1", op.ID)
		for rows != nil && rows.Next() {
			var j string
			_ = rows.Scan(&j)
			jobs = append(jobs, j)
		}
		fail("operation %s (%s) never ended: at step %s, resumed %d times; its jobs: %v", op.ID, op.Kind, got.Step, got.Resumes, jobs)
		return nil
	}

	settings, _ := e.Core.Settings(ctx)
	counts := map[string]int{}
	for i := 0; i < ops; i++ {
		bx := boxes[rng.IntN(len(boxes))]
		// The box's owner acts on it most; the person now and then, and
		// another thread sometimes, to be refused.
		c := bx.owner
		switch r := rng.IntN(10); {
		case r == 0:
			c = snapshots.Owner()
		case r == 1:
			c = callers[rng.IntN(len(callers))]
		}
		before := state(bx.name)
		var ids []string
		for id := range before {
			ids = append(ids, id)
		}
		pick := ""
		if len(ids) > 0 {
			pick = ids[rng.IntN(len(ids))]
		}
		write(t, filepath.Join(bx.dir, "work.txt"), fmt.Sprintf("step %d", i))

		var op *snapshots.Operation
		var err error
		actions := []string{"take", "take", "take", "restore", "restore", "delete", "delete", "rename", "keep", "unkeep", "approve", "approve", "decline", "expire"}
		action := actions[rng.IntN(len(actions))]
		if rng.IntN(40) == 0 {
			action = "switch"
		}
		var request string // the request an answer goes to
		if action == "approve" || action == "decline" || action == "expire" {
			var ids []string
			for id := range pending {
				ids = append(ids, id)
			}
			if len(ids) == 0 {
				// Nothing waits: an agent asks instead, where it must.
				action, c = "restore", bx.owner
			} else {
				slices.Sort(ids)
				request = ids[rng.IntN(len(ids))]
				for j := range boxes {
					if boxes[j].name == pending[request] {
						bx = boxes[j]
					}
				}
				before = state(bx.name)
			}
		}
		if pick == "" && (action != "approve" && action != "decline" && action != "expire" && action != "switch") {
			action = "take"
		}
		switch action {
		case "take":
			op, _, err = e.Take.Take(ctx, c, taking.TakeRequest{Box: bx.name, Name: fmt.Sprintf("t%d", i)})
		case "restore":
			op, err = e.Restores.Restore(ctx, c, snapshots.RestoreRequest{Box: bx.name, Snapshot: pick, Replace: true})
		case "delete":
			op, err = e.Keeps.Delete(ctx, c, snapshots.DeleteRequest{Box: bx.name, Snapshot: pick})
		case "rename":
			_, err = e.Keeps.Rename(ctx, c, bx.name, pick, fmt.Sprintf("renamed %d", i))
		case "keep":
			op, err = e.Keeps.Keep(ctx, c, snapshots.KeepRequest{Box: bx.name, Snapshot: pick, Days: 1 + rng.IntN(30)})
		case "unkeep":
			op, err = e.Keeps.Unkeep(ctx, c, snapshots.KeepRequest{Box: bx.name, Snapshot: pick})
		case "switch":
			agentsMayRestore = !agentsMayRestore
			e.SetSettings(t, func(st *snapshots.Settings) { st.AgentsMayRestore = agentsMayRestore })
		case "approve":
			op, err = e.Approvals.Approve(ctx, snapshots.Owner(), request)
			if op != nil {
				var yes struct{ By, Request string }
				_ = json.Unmarshal(op.Consent, &yes)
				if op.ByKind != "agent" || yes.By != "the person" || yes.Request != request {
					fail("op %d: request %s's restore %s: by %s, consent %s", i, request, op.ID, op.ByKind, op.Consent)
				}
				approvedOp[op.ID] = request
			}
		case "decline":
			err = e.Approvals.Decline(ctx, snapshots.Owner(), request)
		case "expire":
			// The core's clock moves past the request's time; listing the
			// requests expires it.
			ahead.Add(int64(approvalMinutes*time.Minute + time.Second))
			if _, err := e.Approvals.List(ctx, snapshots.Owner(), ""); err != nil {
				fail("op %d: requests: %v", i, err)
			}
			_, err = e.Approvals.Approve(ctx, snapshots.Owner(), request)
			if err == nil {
				fail("op %d: the expired request %s was approved", i, request)
			}
		}
		if request != "" {
			// Whatever the answer, the request is no longer waiting (an
			// approval whose plan changed asks again).
			a, aerr := e.Approvals.Get(ctx, snapshots.Owner(), request)
			if aerr != nil {
				fail("op %d: request %s: %v", i, request, aerr)
			}
			switch a.State {
			case approvals.ApprovalPending:
				if action != "approve" {
					fail("op %d: request %s still waits after %s", i, request, action)
				}
			case approvals.ApprovalApproved:
				delete(pending, request)
				if a.Operation == nil || approvedOp[*a.Operation] != request {
					fail("op %d: approved request %s names operation %v", i, request, a.Operation)
				}
			default:
				delete(pending, request)
				closed[request] = a.State
				if a.Operation != nil {
					fail("op %d: the %s request %s names operation %s", i, a.State, request, *a.Operation)
				}
			}
			if action == "expire" && a.State != approvals.ApprovalExpired {
				fail("op %d: request %s is %s after its time", i, request, a.State)
			}
			counts[action+" "+a.State]++
		}
		if action == "restore" && c.Kind == snapshots.CallerAgent {
			if asked, ok := approvals.AsAsked(err); ok {
				if bx.name != runsOn.name && agentsMayRestore {
					fail("op %d: %s asked to restore %s, which needs no word: %s", i, c.Thread, bx.name, asked.Words)
				}
				pending[asked.Approval.ID] = bx.name
				counts["restore asked"]++
				err = refusalLike
			} else if err == nil && (bx.name == runsOn.name || !agentsMayRestore) {
				fail("op %d: an agent restored %s without the person's word (operation %s)", i, bx.name, op.ID)
			}
		}
		// An operation's rows are there as soon as it is admitted.
		consentHolds(i, action)
		if i > 0 && i%killEvery == 0 {
			// A worker dies mid-run, as a crash would, and comes back.
			k := rng.IntN(len(workers))
			workers[k].Kill()
			workers[k] = startWorker(t, dsn, root, "", "")
		}
		if err != nil {
			if _, ok := snapshots.AsRefusal(err); !ok && err != refusalLike {
				fail("op %d %s by %s: not a refusal: %v", i, action, c.Kind, err)
			}
			if err != refusalLike {
				counts["refused"]++
			}
			after := state(bx.name)
			if len(after) != len(before) {
				fail("op %d: a refused %s changed the box: %d → %d snapshots", i, action, len(before), len(after))
			}
			continue
		}
		if action == "approve" && op != nil {
			action = "restore" // the approved request's restore, checked as one
			if op.Target != nil {
				pick = *op.Target
			}
		}
		var done *snapshots.Operation
		if op != nil {
			done = wait(op)
			counts[action+" "+done.State]++
		} else if request == "" {
			counts[action]++
		}
		after := state(bx.name)

		// Limits: 5 besides undos, and 2 undos.
		total, undoN := 0, 0
		for _, s := range after {
			if s.IsUndo() {
				undoN++
			} else if s.State != snapshots.StateFailed {
				total++
			}
		}
		if total > settings.PerBox || undoN > snapshots.UndosPerBox {
			var held []string
			for _, s := range after {
				held = append(held, fmt.Sprintf("‘%s’ (%s, undo %v, kept %v)", s.Name, s.State, s.IsUndo(), s.Kept()))
			}
			sort.Strings(held)
			why := ""
			if done != nil {
				why = fmt.Sprintf("; the operation ended %s: %s", done.State, coretest.Deref(done.Error))
			}
			fail("op %d (%s): %s holds %d snapshots and %d undos%s: %s", i, action, bx.name, total, undoN, why, strings.Join(held, ", "))
		}
		// What went without being asked for.
		for id, s := range before {
			if _, ok := after[id]; ok {
				continue
			}
			asked := action == "delete" && id == pick && done != nil && done.State == snapshots.OpDone
			if asked {
				continue
			}
			if s.Kept() {
				fail("op %d (%s): the kept snapshot ‘%s’ was deleted by itself", i, action, s.Name)
			}
			replacedUndo := action == "restore" && s.IsUndo() && id != pick
			if !replacedUndo && (s.ByKind == "owner" || s.ByKind == "cli" || s.OwnerKind == "person") {
				fail("op %d (%s): the person's snapshot ‘%s’ was deleted by itself", i, action, s.Name)
			}
			switch {
			case action == "take" && !s.IsUndo() && c.Kind == snapshots.CallerAgent && s.ByThreadID != nil && *s.ByThreadID == c.Thread:
			case action == "restore" && s.IsUndo() && id != pick:
			default:
				fail("op %d (%s by %s): ‘%s’ went without a reason the rules give (undo %v, by %s)", i, action, c.Kind, s.Name, s.IsUndo(), s.ByKind)
			}
		}
		// Every change has its event.
		if done != nil && done.State == snapshots.OpDone {
			want := map[string]string{"take": snapshots.EvSnapshotTaken, "restore": snapshots.EvRestored,
				"delete": snapshots.EvSnapshotDeleted, "keep": snapshots.EvSnapshotKept, "unkeep": snapshots.EvSnapshotUnkept}[action]
			var n int
			if err := pool.QueryRow(ctx, "SELECT count(*) FROM box_log WHERE operation_id = $1 AND kind = $2", done.ID, want).Scan(&n); err != nil || n == 0 {
				fail("op %d: the %s %s has no %s event in the box log", i, action, done.ID, want)
			}
		}
	}
	var running int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM operations WHERE state IN ('running', 'unknown')").Scan(&running); err != nil || running != 0 {
		fail("%d operations never settled", running)
	}
	if len(approvedOp) == 0 || len(closed) == 0 {
		fail("the run answered no request: %d approved, %d declined or expired", len(approvedOp), len(closed))
	}
	var summary []string
	for k, v := range counts {
		summary = append(summary, fmt.Sprintf("%s %d", k, v))
	}
	t.Logf("seed %d: %d operations: %s", seed, ops, strings.Join(summary, ", "))
}

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boxsnap/boxsnap/app/pgcluster"
	"github.com/boxsnap/boxsnap/providers/local"
)

// soakFor is how long the agents and the person work; make test's short
// form, or the README's long one (-soak=30m).
var soakFor = flag.Duration("soak", 75*time.Second, "how long TestADayInTheLife's agents and person work")

// soakBinary runs a boxsnap binary built elsewhere (an older commit's, to
// see the soak fail on it) instead of building this tree's.
var soakBinary = flag.String("soak-binary", "", "a boxsnap binary for TestADayInTheLife; empty: build this tree's")

// The soak's shortened periodic intervals, given to every process as the
// README's settings.
const (
	soakRecover   = 5 * time.Second
	soakAutomatic = 3 * time.Second
	soakThinning  = 10 * time.Second
	soakTrash     = 5 * time.Second
	// soakDown is how long a killed worker stays dead: past what the
	// recover check allows, so only a live worker's resume passes it.
	soakDown   = 2*soakRecover + 8*time.Second
	soakAgents = 8
	// soakCadence is the local backend's cadence (15 s, the least
	// Settings' checkSeconds allows).
	soakCadence = 15 * time.Second
	// boxCommand is the template's process: a long sleep, counted in
	// /proc per box.
	boxCommand = "sleep 86399"
	// soakDisk is the template's disk bound: what a box writes (its
	// markers) fits in it many times.
	soakDisk = 8 << 20
)

// soakTake is one take a caller was told of (acknowledged: it answered an
// operation), and what the marker file held just before it.
type soakTake struct {
	Box, BoxID, Name, Request, By string
	Operation, Snapshot           string
	Marker                        string
	At                            time.Time
	// Deleted: the person deleted it afterwards.
	Deleted bool
	// NoMarker: a take of the unchanged box, which holds no marker.
	NoMarker bool
}

// soakKill is a worker killed, and when.
type soakKill struct {
	worker string
	at     time.Time
}

type soakBox struct {
	name, id, dir, token string
	agent                int // -1: the person's
	// markers are every marker content it ever held.
	mu      sync.Mutex
	markers map[string]bool
	// firstMarker is when its first marker was written: an automatic
	// snapshot taken before holds none.
	firstMarker time.Time
}

// TestADayInTheLife runs boxsnap as the README does, from its binary: a
// private PostgreSQL, one web process (serve --workers=false) and two workers
// (work), the periodic intervals shortened. Eight agents (four over the JSON
// tools, four over MCP) and the person (the API and the CLI) work on running
// boxes, while the test kills a worker twice, stops PostgreSQL once and fills
// the local store's small disk once. At the end it checks, from the outside,
// that nothing was lost or left behind: each check is its own subtest, so one
// failing names what broke, with IDs.
func TestADayInTheLife(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the soak mounts a small disk and runs boxes as another user: run it as root")
	}
	if _, err := exec.LookPath("pg_ctl"); err != nil {
		if _, err := os.Stat("/usr/lib/postgresql"); err != nil {
			t.Skip("no PostgreSQL binaries")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	log := &soakLog{t: t}
	root := t.TempDir()
	// The box user passes through the folders above the data folder.
	_ = os.Chmod(root, 0o755)
	_ = os.Chmod(filepath.Dir(root), 0o755)

	// The binary, built as make build does.
	bin := filepath.Join(root, "boxsnap")
	if *soakBinary != "" {
		if bin, err = filepath.Abs(*soakBinary); err != nil {
			t.Fatal(err)
		}
	} else {
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}

	// PostgreSQL, a private cluster of the test's own.
	pgOpts := pgcluster.Options{DataDir: filepath.Join(root, "pg"), ForTests: true, Port: 5433,
		Logger: slog.New(slog.DiscardHandler)}
	pg, err := pgcluster.Start(ctx, pgOpts)
	if err != nil {
		t.Fatal(err)
	}
	var pgMu sync.Mutex
	t.Cleanup(func() {
		pgMu.Lock()
		defer pgMu.Unlock()
		_ = pg.Stop(context.Background())
	})
	if err := pg.EnsureDatabase(ctx, "boxsnap"); err != nil {
		t.Fatal(err)
	}
	dsn := pg.DSN("boxsnap") + " pool_max_conns=12"

	// The data folder; the local store on a small disk of its own.
	data := filepath.Join(root, "data")
	localRoot := filepath.Join(data, "local")
	if err := os.MkdirAll(localRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	// Each box is a file system of its own, its image 8 MiB (soakDisk), all
	// of it taken on the store's disk at once: ten of them hold 80 MiB.
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=192m,mode=0755", "tmpfs", localRoot).CombinedOutput(); err != nil {
		t.Fatalf("mount a 192 MiB tmpfs for the local store: %v: %s", err, out)
	}
	t.Cleanup(func() {
		// The boxes' own file systems first, then the store. Box processes
		// may hold them: lazy, so they go when the processes do.
		if err := local.UnmountAll(localRoot); err != nil {
			t.Logf("unmount the boxes' file systems: %v", err)
		}
		if out, err := exec.Command("umount", "-l", localRoot).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", localRoot, err, out)
		}
	})
	tmplDir := filepath.Join(data, "templates", "soak")
	if err := os.MkdirAll(tmplDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmplDir, "README"), []byte("a soak box\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	port := freePort(t)
	base := "http://127.0.0.1:" + port
	env := append(os.Environ(),
		"DATABASE_URL="+dsn, "BOXSNAP_DATA_DIR="+data, "BOXSNAP_ADDR=127.0.0.1:"+port,
		"BOXSNAP_PASSWORD="+Password, "BOXSNAP_LOG_FORMAT=json", "BOXSNAP_SHUTDOWN_TIMEOUT=5s",
		"BOXSNAP_RECOVER_INTERVAL="+soakRecover.String(), "BOXSNAP_AUTOMATIC_INTERVAL="+soakAutomatic.String(),
		"BOXSNAP_THINNING_INTERVAL="+soakThinning.String(), "BOXSNAP_TRASH_INTERVAL="+soakTrash.String(),
		"BOXSNAP_RECONCILE_INTERVAL=20s", "BOXSNAP_OUTSIDE_INTERVAL=20s", "BOXSNAP_ROOM_INTERVAL=20s",
		"BOXSNAP_EXPIRY_INTERVAL=20s", "BOXSNAP_HOUSEKEEPING_INTERVAL=30s")
	logs := filepath.Join(root, "logs")
	_ = os.MkdirAll(logs, 0o755)
	newProc := func(name string, args ...string) *soakProc {
		f, err := os.Create(filepath.Join(logs, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		return &soakProc{name: name, args: args, env: env, log: f}
	}
	// The Procfile's processes: web and two workers.
	web := newProc("web", "serve", "--workers=false")
	workers := []*soakProc{newProc("worker-1", "work"), newProc("worker-2", "work")}
	procs := append([]*soakProc{web}, workers...)
	t.Cleanup(func() {
		for _, p := range procs {
			p.stop()
			p.log.Close()
		}
		if t.Failed() {
			keep := filepath.Join(os.TempDir(), fmt.Sprintf("boxsnap-soak-logs-%d", time.Now().Unix()))
			if out, err := exec.Command("cp", "-a", logs, keep).CombinedOutput(); err == nil {
				t.Logf("the processes' logs are kept in %s", keep)
			} else {
				t.Logf("keep the logs: %v: %s", err, out)
			}
		}
	})
	if out, err := runEnv(env, bin, "migrate"); err != nil {
		t.Fatalf("boxsnap migrate: %v\n%s", err, out)
	}
	for _, p := range procs {
		if err := p.start(bin); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitHealthy(base, time.Minute); err != nil {
		t.Fatal(err)
	}

	// The person: a personal token from the pages, a box template by the API.
	tok, err := personToken(ctx, base, Password)
	if err != nil {
		t.Fatal(err)
	}
	person := newSoakHTTP(base, tok)
	cliEnv := append(os.Environ(), "BOXSNAP_SERVER="+base, "BOXSNAP_TOKEN="+tok)
	if err := person.do(ctx, "PUT", "/api/v1/templates/soak", map[string]any{
		"backend": "local", "kind": "linux", "source": "soak", "command": boxCommand, "limits": map[string]any{"diskBytes": soakDisk}}, nil); err != nil {
		t.Fatalf("save the box template: %v", err)
	}

	// Eight agents, each a thread with its token and one box from the template.
	var boxes []*soakBox
	for i := range soakAgents {
		var th struct {
			Token string `json:"token"`
		}
		if err := person.do(ctx, "POST", "/api/v1/threads", map[string]string{"title": fmt.Sprintf("soak agent %d", i)}, &th); err != nil {
			t.Fatalf("thread for agent %d: %v", i, err)
		}
		boxes = append(boxes, &soakBox{name: fmt.Sprintf("agent-%d", i), token: th.Token, agent: i})
	}
	boxes = append(boxes, &soakBox{name: "person-box", token: tok, agent: -1},
		&soakBox{name: "person-trash", token: tok, agent: -1})
	for _, b := range boxes {
		var got struct {
			ID    string `json:"id"`
			State string `json:"state"`
		}
		h := newSoakHTTP(base, b.token)
		if err := h.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": b.name, "template": "soak"}, &got); err != nil {
			t.Fatalf("make box %s: %v", b.name, err)
		}
		b.id, b.dir, b.markers = got.ID, filepath.Join(localRoot, "boxes", got.ID), map[string]bool{}
		if _, err := os.Stat(b.dir); err != nil {
			t.Fatalf("box %s (%s): its folder %s: %v", b.name, b.id, b.dir, err)
		}
	}
	boxByName := map[string]*soakBox{}
	folders := map[string]string{}
	for _, b := range boxes {
		boxByName[b.name] = b
		folders[b.name] = b.dir
	}
	// The unchanged box: agent 7 never writes in it.
	const unchanged = "agent-7"

	// RSS at the start: each process a settle time after it started, until
	// the warmed baseline a fifth into the day replaces it.
	time.Sleep(5 * time.Second)
	rssStart := map[string]int64{}
	for _, p := range procs {
		rssStart[p.name] = rss(p.pid())
	}

	var (
		takesMu  sync.Mutex
		takes    []*soakTake
		maxProcs = map[string]int{}
	)
	record := func(tk *soakTake) {
		takesMu.Lock()
		defer takesMu.Unlock()
		takes = append(takes, tk)
	}
	work, stopWork := context.WithTimeout(ctx, *soakFor)
	defer stopWork()
	started := time.Now()
	var wg sync.WaitGroup

	// The agents: write a marker, take, now and then restore an earlier take
	// and check the marker came back.
	for _, b := range boxes[:soakAgents] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			overMCP := b.agent%2 == 1
			var ses *mcp.ClientSession
			if overMCP {
				var err error
				if ses, err = soakMCP(base, b.token); err != nil {
					log.failf("agents work", "agent %d: MCP session: %v", b.agent, err)
					return
				}
				defer ses.Close()
			}
			call := func(tool string, args map[string]any, out any) error {
				if overMCP {
					return mcpCall(work, ses, tool, args, out)
				}
				return newSoakHTTP(base, b.token).do(work, "POST", "/api/v1/tools/"+tool, args, out)
			}
			var mine []*soakTake
			for n := 0; work.Err() == nil; n++ {
				if b.name == unchanged {
					sleepCtx(work, 2*time.Second)
					continue
				}
				marker := fmt.Sprintf("%s take %d %s\n", b.name, n, randHex(8))
				if err := b.writeMarker(marker); err != nil {
					log.notef("%s: write the marker: %v (the disk may be full)", b.name, err)
					sleepCtx(work, time.Second)
					continue
				}
				tk := &soakTake{Box: b.name, BoxID: b.id, Name: fmt.Sprintf("%s-%d", b.name, n), Request: "rq-" + randHex(10),
					By: map[bool]string{true: "mcp", false: "tools"}[overMCP], Marker: marker}
				var ans struct {
					Operation string `json:"operation"`
					Snapshot  string `json:"snapshot"`
				}
				// A take that failed for want of a database or a disk is
				// asked again with the same request: never a second take.
				for attempt := 0; attempt < 20 && work.Err() == nil; attempt++ {
					err := call("box_snapshot", map[string]any{"box": b.name, "name": tk.Name, "request": tk.Request}, &ans)
					if err == nil {
						break
					}
					// At the box's limit the agent deletes its oldest, as
					// the refusal says, and asks again.
					if strings.Contains(err.Error(), `"code":"limit"`) && len(mine) > 0 {
						old := mine[0]
						if derr := call("box_snapshot_delete", map[string]any{"box": b.name, "snapshot": old.Snapshot, "request": "dl-" + randHex(10)}, nil); derr != nil {
							log.notef("%s: delete %s (%s) at the limit: %v", b.name, old.Name, old.Snapshot, derr)
						} else {
							takesMu.Lock()
							old.Deleted = true
							takesMu.Unlock()
							mine = mine[1:]
							continue
						}
					}
					if attempt == 19 {
						log.notef("%s: take %s: %v", b.name, tk.Name, err)
					}
					sleepCtx(work, time.Second)
				}
				if ans.Operation != "" {
					tk.Operation, tk.Snapshot, tk.At = ans.Operation, ans.Snapshot, time.Now()
					record(tk)
					mine = append(mine, tk)
				}
				// Work goes on after the take: the box changed since its
				// last snapshot, for the automatic check to see.
				_ = os.WriteFile(filepath.Join(b.dir, "work.txt"), []byte(randHex(16)), 0o644)
				// Every fourth round, restore a take of two rounds ago.
				if n%4 == 3 && len(mine) >= 3 {
					back := mine[len(mine)-3]
					err := call("box_restore", map[string]any{"box": b.name, "snapshot": back.Snapshot, "replace": true, "request": "rs-" + randHex(10)}, nil)
					if err == nil {
						got, rerr := os.ReadFile(filepath.Join(b.dir, "marker.txt"))
						if rerr != nil || string(got) != back.Marker {
							log.failf("every ready snapshot restores byte-exact", "%s: restored %s (%s): marker.txt holds %q (%v), the take held %q",
								b.name, back.Name, back.Snapshot, got, rerr, back.Marker)
						}
					} else {
						log.notef("%s: restore %s: %v", b.name, back.Snapshot, err)
					}
				}
				sleepCtx(work, time.Duration(1500+b.agent*150)*time.Millisecond)
			}
		}()
	}

	// The person: takes on their machine by the API and the CLI.
	wg.Add(1)
	go func() {
		defer wg.Done()
		b := boxByName["person-box"]
		var kept []*soakTake // the person's takes still theirs
		for n := 0; work.Err() == nil; n++ {
			// The limit is 5 a box: the person deletes their oldest
			// first, by the API and the CLI in turn.
			if len(kept) >= 4 {
				old := kept[0]
				var err error
				if n%2 == 0 {
					// It waits for the delete: a 202 is only its start.
					var ans struct {
						Operation struct {
							State string  `json:"state"`
							Error *string `json:"error"`
						} `json:"operation"`
					}
					err = person.do(work, "DELETE", "/api/v1/boxes/person-box/snapshots/"+url.PathEscape(old.Name)+"?wait=true", nil, &ans)
					if err == nil && ans.Operation.State != "" && ans.Operation.State != "done" {
						err = fmt.Errorf("its operation ended %s: %v", ans.Operation.State, ans.Operation.Error)
					}
				} else {
					var out []byte
					if out, err = runEnv(cliEnv, bin, "snapshot", "delete", "person-box", old.Name); err != nil {
						err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
					}
				}
				if err != nil {
					log.notef("the person's delete of %s: %v", old.Name, err)
				} else {
					takesMu.Lock()
					old.Deleted = true
					takesMu.Unlock()
					kept = kept[1:]
				}
			}
			marker := fmt.Sprintf("person take %d %s\n", n, randHex(8))
			if err := b.writeMarker(marker); err != nil {
				sleepCtx(work, time.Second)
				continue
			}
			tk := &soakTake{Box: b.name, BoxID: b.id, Name: fmt.Sprintf("person-%d", n), Marker: marker}
			if n%2 == 0 {
				tk.By, tk.Request = "api", "rq-"+randHex(10)
				var ans struct {
					Operation struct {
						ID        string   `json:"id"`
						Snapshots []string `json:"snapshots"`
					} `json:"operation"`
				}
				op := &ans.Operation
				for attempt := 0; attempt < 20 && work.Err() == nil; attempt++ {
					if err := person.do(work, "POST", "/api/v1/boxes/person-box/snapshots?wait=false&request="+tk.Request,
						map[string]string{"name": tk.Name}, &ans); err == nil {
						break
					}
					sleepCtx(work, time.Second)
				}
				if op.ID != "" {
					tk.Operation, tk.At = op.ID, time.Now()
					if len(op.Snapshots) > 0 {
						tk.Snapshot = op.Snapshots[0]
					}
					record(tk)
					kept = append(kept, tk)
				}
			} else {
				tk.By = "cli"
				out, err := runEnv(cliEnv, bin, "snapshot", "take", "person-box", "--name", tk.Name)
				if err == nil {
					tk.At = time.Now()
					record(tk) // its snapshot is found by name at the end
					kept = append(kept, tk)
				} else {
					log.notef("the CLI's take %s: %v: %s", tk.Name, err, strings.TrimSpace(string(out)))
				}
			}
			_ = os.WriteFile(filepath.Join(b.dir, "work.txt"), []byte(randHex(16)), 0o644)
			sleepCtx(work, 2*time.Second)
		}
	}()

	// The watcher: processes per box, every second.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for work.Err() == nil {
			for name, pids := range boxProcesses(folders, boxCommand) {
				if len(pids) > maxProcs[name] {
					maxProcs[name] = len(pids)
					if len(pids) > 1 {
						log.failf("each box ran at most one process", "%s: %d processes of %q at %s: pids %v",
							name, len(pids), boxCommand, time.Since(started).Round(time.Second), pids)
					}
				}
			}
			sleepCtx(work, time.Second)
		}
	}()

	// The faults, spread over the day: a worker killed, PostgreSQL stopped,
	// the disk filled, the other worker killed.
	var kills []soakKill
	at := func(frac float64) { sleepCtx(work, time.Until(started.Add(time.Duration(frac*float64(*soakFor))))) }
	burst := 0
	killWorker := func(p *soakProc) {
		// Operations in flight at the kill: a take of each of two boxes
		// that hold no marker, asked by the person without waiting, just
		// before it; River gives each to either worker.
		for _, box := range []string{unchanged, "person-trash", unchanged, "person-trash"} {
			tk := &soakTake{Box: box, BoxID: boxByName[box].id, Name: fmt.Sprintf("at-the-kill-%d", burst),
				Request: "rq-" + randHex(10), By: "api", NoMarker: true}
			burst++
			var ans struct {
				Operation struct {
					ID string `json:"id"`
				} `json:"operation"`
			}
			if err := person.do(work, "POST", "/api/v1/boxes/"+box+"/snapshots?wait=false&request="+tk.Request,
				map[string]string{"name": tk.Name}, &ans); err != nil {
				log.notef("the take %s before the kill: %v", tk.Name, err)
				continue
			}
			tk.Operation, tk.At = ans.Operation.ID, time.Now()
			record(tk)
		}
		kills = append(kills, soakKill{p.name, time.Now()})
		log.notef("kill %s (pid %d) at %s", p.name, p.pid(), time.Since(started).Round(time.Second))
		p.kill()
		// It stays dead past the recover interval: the other worker
		// resumes its operations (a worker also resumes at its start).
		time.Sleep(soakDown)
		if err := p.start(bin); err != nil {
			log.failf("faults", "start %s again: %v", p.name, err)
		}
		// Its memory is held to the baseline its first incarnation set.
	}
	at(0.2)
	// The baseline for memory: each process after a fifth of the day's
	// work, warmed, before the first fault; a worker started again after
	// its kill is held to it too, at the same work.
	for _, p := range procs {
		rssStart[p.name] = rss(p.pid())
	}
	if work.Err() == nil {
		killWorker(workers[0])
	}
	at(0.4)
	if work.Err() == nil {
		log.notef("stop PostgreSQL at %s", time.Since(started).Round(time.Second))
		pgMu.Lock()
		if err := pg.Stop(ctx); err != nil {
			log.failf("faults", "stop PostgreSQL: %v", err)
		}
		sleepCtx(work, 5*time.Second)
		if pg, err = pgcluster.Start(ctx, pgOpts); err != nil {
			pgMu.Unlock()
			t.Fatalf("start PostgreSQL again: %v", err)
		}
		pgMu.Unlock()
		log.notef("PostgreSQL back at %s", time.Since(started).Round(time.Second))
	}
	// Thinning keeps every automatic snapshot of the last 10 minutes: the
	// ones listed now must all be there at the end.
	midDay := map[string][]listed{}
	for _, b := range boxes[:soakAgents] {
		if l, err := listSnapshots(ctx, person, b.name); err == nil {
			for _, s := range l {
				if s.Automatic && s.State == "ready" {
					midDay[b.name] = append(midDay[b.name], s)
				}
			}
		}
	}
	at(0.55)
	if work.Err() == nil {
		filler := filepath.Join(localRoot, "filler")
		n := fillDisk(filler)
		log.notef("filled the store's disk with %d MiB at %s", n>>20, time.Since(started).Round(time.Second))
		sleepCtx(work, 8*time.Second)
		_ = os.Remove(filler)
	}
	at(0.75)
	if work.Err() == nil {
		killWorker(workers[1])
	}
	// The trash: the person's second box released, its window made to end.
	var trashed time.Time
	if out, err := runEnv(cliEnv, bin, "box", "release", "person-trash"); err != nil {
		log.failf("a trashed box left the trash after its window", "boxsnap box release person-trash: %v: %s", err, out)
	} else {
		trashed = time.Now()
	}
	wg.Wait()
	log.notef("the day's work ended after %s; %d takes acknowledged", time.Since(started).Round(time.Second), len(takes))

	// Let what was asked settle: twice the recover interval and a little,
	// asked again at each commit that writes an operation.
	watchRows(ctx, t, dsn, "e2e_soak_operations", "operations").until(ctx, 2*soakRecover+20*time.Second, func() bool {
		return pendingOps(ctx, person, takes) == 0
	})

	checkTakes(ctx, log, person, takes, boxes)
	checkAutomatic(ctx, log, person, boxes, unchanged, started, midDay)
	checkRecovered(ctx, log, pg.DSN("boxsnap"), kills)
	checkTrash(ctx, log, person, pg.DSN("boxsnap"), boxByName["person-trash"], trashed)
	checkRiver(ctx, log, pg.DSN("boxsnap"))
	for _, p := range procs {
		end := rss(p.pid())
		start := rssStart[p.name]
		log.notef("RSS of %s: %d MiB at the start, %d MiB at the end", p.name, start>>20, end>>20)
		if start > 0 && (end > start*12/10 || end == 0) {
			log.failf("memory at the end within 20% of the start", "%s (pid %d): RSS %d KiB at the start, %d KiB at the end",
				p.name, p.pid(), start>>10, end>>10)
		}
	}

	for _, c := range []string{
		"agents work", "faults",
		"every acknowledged operation settled, none lost, none doubled, none stuck",
		"every ready snapshot restores byte-exact",
		"automatic snapshots at the cadence on changed boxes, none on unchanged ones",
		"thinning kept its tiers",
		"a trashed box left the trash after its window",
		"a killed worker's operations resumed within the recover interval",
		"no River job stays running",
		"memory at the end within 20% of the start",
		"each box ran at most one process",
	} {
		log.report(t, c)
	}
}

func (b *soakBox) writeMarker(s string) error {
	b.mu.Lock()
	b.markers[s] = true
	if b.firstMarker.IsZero() {
		b.firstMarker = time.Now()
	}
	b.mu.Unlock()
	return os.WriteFile(filepath.Join(b.dir, "marker.txt"), []byte(s), 0o644)
}

// listed is a snapshot as the API lists it.
type listed struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	State     string    `json:"state"`
	Automatic bool      `json:"automatic"`
	TakenAt   time.Time `json:"takenAt"`
}

// listSnapshots lists a box's snapshots: ordinary ones and automatic ones.
func listSnapshots(ctx context.Context, h *soakHTTP, box string) ([]listed, error) {
	var all []listed
	for _, q := range []string{"", "?automatic=true"} {
		var ans struct {
			Boxes []struct {
				Snapshots []listed `json:"snapshots"`
			} `json:"boxes"`
		}
		if err := h.do(ctx, "GET", "/api/v1/boxes/"+box+"/snapshots"+q, nil, &ans); err != nil {
			return nil, err
		}
		for _, b := range ans.Boxes {
			all = append(all, b.Snapshots...)
		}
	}
	seen := map[string]bool{}
	out := all[:0]
	for _, s := range all {
		if !seen[s.ID] {
			seen[s.ID] = true
			out = append(out, s)
		}
	}
	return out, nil
}

func pendingOps(ctx context.Context, h *soakHTTP, takes []*soakTake) int {
	n := 0
	for _, tk := range takes {
		if tk.Operation == "" {
			continue
		}
		var ans struct {
			Operation struct {
				State string `json:"state"`
			} `json:"operation"`
		}
		if h.do(ctx, "GET", "/api/v1/operations/"+tk.Operation, nil, &ans) != nil || ans.Operation.State == "running" {
			n++
		}
	}
	return n
}

// checkTakes: every acknowledged take settled, none lost, none doubled, and
// every ready snapshot's marker is what was written before its take.
func checkTakes(ctx context.Context, log *soakLog, h *soakHTTP, takes []*soakTake, boxes []*soakBox) {
	const settled = "every acknowledged operation settled, none lost, none doubled, none stuck"
	const exact = "every ready snapshot restores byte-exact"
	byBox := map[string][]listed{}
	for _, b := range boxes {
		if b.name == "person-trash" {
			continue
		}
		l, err := listSnapshots(ctx, h, b.name)
		if err != nil {
			log.failf(settled, "list %s's snapshots: %v", b.name, err)
		}
		byBox[b.name] = l
	}
	// The newest takes of a box within its limit must be there; older ones
	// may have been replaced by the limit of 5.
	perBox := map[string][]*soakTake{}
	for _, tk := range takes {
		perBox[tk.Box] = append(perBox[tk.Box], tk)
	}
	for box, tks := range perBox {
		for i, tk := range tks {
			newest := i >= len(tks)-4
			if tk.Operation != "" {
				var ans struct {
					Operation struct {
						State, Step string
						Error       *string
						Snapshots   []string
					} `json:"operation"`
				}
				op := &ans.Operation
				if err := h.do(ctx, "GET", "/api/v1/operations/"+tk.Operation, nil, &ans); err != nil {
					log.failf(settled, "%s: take %s: operation %s: %v", box, tk.Name, tk.Operation, err)
					continue
				}
				switch op.State {
				case "done", "failed":
				default:
					e := ""
					if op.Error != nil {
						e = *op.Error
					}
					log.failf(settled, "%s: take %s (%s by %s): operation %s is %s at step %s %s", box, tk.Name, tk.Request, tk.By, tk.Operation, op.State, op.Step, e)
				}
				if op.State != "done" {
					continue
				}
			}
			if box == "person-trash" {
				continue // released at the end: its snapshots went with it
			}
			var same []listed
			for _, s := range byBox[box] {
				if s.Name == tk.Name {
					same = append(same, s)
				}
			}
			switch {
			case tk.Deleted && len(same) > 0:
				log.failf(settled, "%s: %s (%s) was deleted by the person, and is listed again: %v", box, tk.Name, tk.Snapshot, same)
			case tk.Deleted:
			case len(same) > 1:
				log.failf(settled, "%s: take %s (request %s by %s) made %d snapshots: %v", box, tk.Name, tk.Request, tk.By, len(same), same)
			case len(same) == 0 && newest:
				log.failf(settled, "%s: take %s (operation %s, snapshot %s, by %s) acknowledged and done, but not listed", box, tk.Name, tk.Operation, tk.Snapshot, tk.By)
			}
			for _, s := range same {
				if s.State != "ready" || tk.NoMarker {
					continue
				}
				got, err := download(ctx, h, box, s.ID)
				if err != nil {
					log.failf(exact, "%s: download marker.txt of %s (%s): %v", box, s.Name, s.ID, err)
				} else if got != tk.Marker {
					log.failf(exact, "%s: %s (%s) holds marker %q, the take was of %q", box, s.Name, s.ID, got, tk.Marker)
				}
			}
		}
	}
	// Automatic snapshots hold some marker the box held.
	for _, b := range boxes {
		for _, s := range byBox[b.name] {
			if !s.Automatic || s.State != "ready" {
				continue
			}
			got, err := download(ctx, h, b.name, s.ID)
			if err != nil {
				b.mu.Lock()
				before := b.firstMarker.IsZero() || s.TakenAt.Before(b.firstMarker)
				b.mu.Unlock()
				if (b.name != "agent-7" && !before) || !strings.Contains(err.Error(), "404") {
					log.failf(exact, "%s: download marker.txt of automatic %s (%s): %v", b.name, s.Name, s.ID, err)
				}
				continue
			}
			b.mu.Lock()
			ok := b.markers[got]
			b.mu.Unlock()
			if !ok {
				log.failf(exact, "%s: automatic %s (%s) holds marker %q, which the box never held", b.name, s.Name, s.ID, got)
			}
		}
	}
}

func download(ctx context.Context, h *soakHTTP, box, id string) (string, error) {
	var b []byte
	err := h.do(ctx, "GET", "/api/v1/boxes/"+box+"/snapshots/"+id+"/download?path=marker.txt", nil, &b)
	return string(b), err
}

// checkAutomatic: changed boxes got automatic snapshots at the cadence;
// the unchanged one none after its first; thinning kept the last 10
// minutes whole and at most one a minute before.
func checkAutomatic(ctx context.Context, log *soakLog, h *soakHTTP, boxes []*soakBox, unchanged string, started time.Time, midDay map[string][]listed) {
	const cadence = "automatic snapshots at the cadence on changed boxes, none on unchanged ones"
	const tiers = "thinning kept its tiers"
	day := time.Since(started)
	for _, b := range boxes {
		if b.name == "person-trash" {
			continue
		}
		l, err := listSnapshots(ctx, h, b.name)
		if err != nil {
			log.failf(cadence, "list %s: %v", b.name, err)
			continue
		}
		var autos []listed
		for _, s := range l {
			if s.Automatic {
				autos = append(autos, s)
			}
		}
		sort.Slice(autos, func(i, j int) bool { return autos[i].TakenAt.Before(autos[j].TakenAt) })
		log.notef("%s: %d automatic snapshots", b.name, len(autos))
		if b.name == unchanged {
			// Its first is of a box never taken: the box changed from
			// nothing. None may follow.
			for i, s := range autos {
				if i > 0 && s.TakenAt.After(started) {
					log.failf(cadence, "%s never changed, yet has automatic %s (%s) taken at %s (%s into the day)",
						b.name, s.Name, s.ID, s.TakenAt.Format(time.TimeOnly), s.TakenAt.Sub(started).Round(time.Second))
				}
			}
			continue
		}
		// An agent's box changed all day, after each take too (work.txt):
		// an automatic snapshot each cadence, but for three the faults may
		// cost. The person's box changes only just before each take, so
		// it has none due past its first. No box has two within one
		// cadence (a check's interval of slack).
		if want := max(1, int(day/soakCadence)-3); b.agent >= 0 && len(autos) < want {
			log.failf(cadence, "%s changed all day (%s), yet has %d automatic snapshots; at a %s cadence at least %d",
				b.name, day.Round(time.Second), len(autos), soakCadence, want)
		}
		for i := 1; i < len(autos); i++ {
			if gap := autos[i].TakenAt.Sub(autos[i-1].TakenAt); gap < soakCadence-soakAutomatic {
				log.failf(cadence, "%s: automatic %s and %s only %s apart; the cadence is %s",
					b.name, autos[i-1].ID, autos[i].ID, gap.Round(time.Millisecond), soakCadence)
			}
		}
		have := map[string]bool{}
		for _, s := range autos {
			have[s.ID] = true
		}
		for _, s := range midDay[b.name] {
			if !have[s.ID] && time.Since(s.TakenAt) <= 10*time.Minute {
				log.failf(tiers, "%s: automatic %s (%s, taken %s ago) was listed mid-day and is gone: thinning keeps all of the last 10 minutes",
					b.name, s.Name, s.ID, time.Since(s.TakenAt).Round(time.Second))
			}
		}
		minutes := map[string]string{}
		for _, s := range autos {
			if time.Since(s.TakenAt) <= 10*time.Minute {
				continue
			}
			k := s.TakenAt.Format("2006-01-02 15:04")
			if other, ok := minutes[k]; ok && time.Since(s.TakenAt) <= time.Hour {
				log.failf(tiers, "%s: two automatic snapshots of minute %s older than 10 minutes: %s and %s", b.name, k, other, s.ID)
			}
			minutes[k] = s.ID
		}
	}
}

// checkRecovered: every operation that was running on a worker when it was
// killed ended within the recover interval (and a little) of its kill.
func checkRecovered(ctx context.Context, log *soakLog, dsn string, kills []soakKill) {
	const check = "a killed worker's operations resumed within the recover interval"
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		log.failf(check, "connect to PostgreSQL: %v", err)
		return
	}
	defer conn.Close(ctx)
	for _, k := range kills {
		// Operations begun before the kill and still open at it.
		rows, err := conn.Query(ctx, `SELECT id, kind, state, step, coalesce(ended_at, now()) FROM operations
			WHERE created_at < $1 AND (ended_at IS NULL OR ended_at > $1)`, k.at)
		if err != nil {
			log.failf(check, "read operations: %v", err)
			return
		}
		for rows.Next() {
			var id, kind, state, step string
			var end time.Time
			if err := rows.Scan(&id, &kind, &state, &step, &end); err != nil {
				log.failf(check, "%v", err)
				break
			}
			log.notef("operation %s (%s) was open when %s was killed; it ended %s after (%s at %s)", id, kind, k.worker, end.Sub(k.at).Round(time.Millisecond), state, step)
			if took := end.Sub(k.at); took > 2*soakRecover+3*time.Second {
				log.failf(check, "operation %s (%s) open when %s was killed ended %s after the kill (%s at %s); the recover interval is %s",
					id, kind, k.worker, took.Round(time.Second), state, step, soakRecover)
			}
		}
		rows.Close()
	}
}

// checkTrash: the released box is in the trash; with its window ended (its
// until moved to now: the window is counted in hours), the trash job takes
// it out within a few of its intervals.
func checkTrash(ctx context.Context, log *soakLog, h *soakHTTP, dsn string, b *soakBox, trashed time.Time) {
	const check = "a trashed box left the trash after its window"
	if trashed.IsZero() {
		return
	}
	inTrash := func() (bool, error) {
		var ans struct {
			Trash []struct {
				Box struct {
					ID string `json:"id"`
				} `json:"box"`
				ID string `json:"id"`
			} `json:"trash"`
		}
		var raw []byte
		if err := h.do(ctx, "GET", "/api/v1/trash", nil, &raw); err != nil {
			return false, err
		}
		_ = json.Unmarshal(raw, &ans)
		return strings.Contains(string(raw), b.id), nil
	}
	if in, err := inTrash(); err != nil || !in {
		log.failf(check, "box %s (%s) released at %s is not in the trash (%v)", b.name, b.id, trashed.Format(time.TimeOnly), err)
		return
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		log.failf(check, "connect: %v", err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE box_trash SET until = now() WHERE box_id = $1`, b.id); err != nil {
		log.failf(check, "end the window of %s: %v", b.id, err)
		return
	}
	// Asked again at each commit that writes the trash or a box.
	if watchRows(ctx, log.t, dsn, "e2e_soak_trash", "box_trash", "boxes").until(ctx, 4*soakTrash+10*time.Second, func() bool {
		in, err := inTrash()
		return err == nil && !in
	}) {
		return
	}
	log.failf(check, "box %s (%s) still in the trash %s after its window ended (the trash interval is %s)", b.name, b.id, 4*soakTrash+10*time.Second, soakTrash)
}

// checkRiver: no River job stays running once the work settled.
func checkRiver(ctx context.Context, log *soakLog, dsn string) {
	const check = "no River job stays running"
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		log.failf(check, "connect: %v", err)
		return
	}
	defer conn.Close(ctx)
	// Asked again at each commit that writes a River job.
	var stuck []string
	if watchRows(ctx, log.t, dsn, "e2e_soak_jobs", "river_job").until(ctx, 20*time.Second, func() bool {
		stuck = nil
		rows, err := conn.Query(ctx, `SELECT id, kind, attempted_at, coalesce(attempted_by::text, '') FROM river_job
			WHERE state = 'running' AND kind NOT IN ('recover') AND attempted_at < now() - interval '15 seconds'`)
		if err != nil {
			log.failf(check, "read river_job: %v", err)
			return true
		}
		for rows.Next() {
			var id int64
			var kind, by string
			var at *time.Time
			if rows.Scan(&id, &kind, &at, &by) == nil {
				stuck = append(stuck, fmt.Sprintf("job %d (%s) running since %v on %s", id, kind, at, by))
			}
		}
		rows.Close()
		return len(stuck) == 0
	}) {
		return
	}
	for _, s := range stuck {
		log.failf(check, "%s", s)
	}
}

// soakMCP opens an MCP session with a thread's token.
func soakMCP(base, token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "boxsnap-soak", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{token}}, MaxRetries: -1}
	return client.Connect(context.Background(), tr, nil)
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpCall(ctx context.Context, ses *mcp.ClientSession, tool string, args map[string]any, out any) error {
	res, err := ses.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return errors.New(text)
	}
	if out != nil {
		return json.Unmarshal([]byte(text), out)
	}
	return nil
}

func runEnv(env []string, bin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	return cmd.CombinedOutput()
}

// fillDisk writes zeros into path until the disk is full; it answers how
// many bytes it wrote.
func fillDisk(path string) int64 {
	f, err := os.Create(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if err != nil {
			return n
		}
	}
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

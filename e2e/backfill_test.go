package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
)

// binHosts runs the built binary as several hosts on one database, each
// with its own data folder; their logs are shown when the test fails.
type binHosts struct {
	t     *testing.T
	bin   string
	root  string
	dsn   string
	procs []*soakProc
}

// newBinHosts builds the binary and makes a database for the hosts.
func newBinHosts(t *testing.T) *binHosts {
	t.Helper()
	if _, err := exec.LookPath("pg_ctl"); err != nil {
		if _, err := os.Stat("/usr/lib/postgresql"); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal("no PostgreSQL binaries")
			}
			t.Skip("no PostgreSQL binaries")
		}
	}
	root := t.TempDir()
	_ = os.Chmod(root, 0o755)
	h := &binHosts{t: t, bin: filepath.Join(root, "boxsnap"), root: root}
	build := exec.Command("go", "build", "-o", h.bin, ".")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	h.dsn = dbtest.NewDSN(t) + " pool_max_conns=12"
	_ = os.MkdirAll(filepath.Join(root, "logs"), 0o755)
	t.Cleanup(func() {
		for _, p := range h.procs {
			p.stop()
			p.log.Close()
		}
		if t.Failed() {
			for _, p := range h.procs {
				if b, err := os.ReadFile(p.log.Name()); err == nil {
					t.Logf("%s's log:\n%s", p.name, tail(string(b), 4000))
				}
			}
		}
	})
	return h
}

// start starts a process of host hostName on its own data folder, with
// the extra settings env, and answers its base URL once it is healthy.
func (h *binHosts) start(hostName string, env []string, args ...string) (*soakProc, string) {
	h.t.Helper()
	port := freePort(h.t)
	name := fmt.Sprintf("%s-%s-%d", hostName, args[0], len(h.procs))
	f, err := os.Create(filepath.Join(h.root, "logs", name+".log"))
	if err != nil {
		h.t.Fatal(err)
	}
	all := append(os.Environ(), "DATABASE_URL="+h.dsn, "BOXSNAP_HOST="+hostName,
		"BOXSNAP_DATA_DIR="+h.dataDir(hostName), "BOXSNAP_ADDR=127.0.0.1:"+port,
		"BOXSNAP_PASSWORD="+Password, "BOXSNAP_LOG_FORMAT=json", "BOXSNAP_SHUTDOWN_TIMEOUT=5s", "BOXSNAP_LOCAL_DISK_IMAGES=false")
	p := &soakProc{name: name, args: args, env: append(all, env...), log: f}
	h.procs = append(h.procs, p)
	if err := p.start(h.bin); err != nil {
		h.t.Fatal(err)
	}
	base := "http://127.0.0.1:" + port
	if args[0] == "serve" {
		if err := waitHealthy(base, 2*time.Minute); err != nil {
			h.t.Fatal(err)
		}
	}
	return p, base
}

// dataDir is host hostName's data folder.
func (h *binHosts) dataDir(hostName string) string { return filepath.Join(h.root, hostName) }

// boxDir is the folder of the local box id on host hostName.
func (h *binHosts) boxDir(hostName, id string) string {
	return filepath.Join(h.dataDir(hostName), "local", "boxes", id)
}

// bucketEnv is the settings that give a host the content store bucket,
// and more.
func bucketEnv(bucket objstore.Config, more ...string) []string {
	return append([]string{"BOXSNAP_CONTENT_STORE=s3://" + bucket.Bucket, "BOXSNAP_CONTENT_STORE_ENDPOINT=" + bucket.Endpoint,
		"BOXSNAP_CONTENT_STORE_ACCESS_KEY=" + bucket.AccessKey, "BOXSNAP_CONTENT_STORE_SECRET_KEY=" + bucket.SecretKey}, more...)
}

// makeBox makes a local box named name through the API and answers its ID.
func makeBox(ctx context.Context, t *testing.T, api *soakHTTP, name string) string {
	t.Helper()
	var got struct {
		ID string `json:"id"`
	}
	if err := api.do(ctx, "POST", "/api/v1/boxes", map[string]string{"name": name, "backend": "local"}, &got); err != nil {
		t.Fatalf("make box %s: %v", name, err)
	}
	return got.ID
}

// takeSnapshots writes a new file into the box's folder before each of n
// takes, each waited for, so every snapshot holds something new.
func takeSnapshots(ctx context.Context, t *testing.T, api *soakHTTP, box, dir string, n int) {
	t.Helper()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note-%02d.txt", i)), []byte(fmt.Sprintf("%s, note %d\n", box, i)), 0o644); err != nil {
			t.Fatal(err)
		}
		var op struct {
			Operation struct {
				State string `json:"state"`
			} `json:"operation"`
		}
		if err := api.do(ctx, "POST", "/api/v1/boxes/"+box+"/snapshots?wait=true", map[string]string{"name": fmt.Sprintf("before the bucket %d", i)}, &op); err != nil {
			t.Fatalf("take %d of %s: %v", i, box, err)
		}
		if op.Operation.State != "done" {
			t.Fatalf("take %d of %s: %+v", i, box, op.Operation)
		}
	}
}

// signedIn is the pages of base, signed in as the person.
func signedIn(ctx context.Context, t *testing.T, base string) *soakHTTP {
	t.Helper()
	h := newSoakHTTP(base, "")
	code, body, err := h.form(ctx, "/signin", url.Values{"password": {Password}})
	if err != nil || code != http.StatusSeeOther {
		t.Fatalf("sign in on %s: %d %v %.300s", base, code, err, body)
	}
	return h
}

// waitPageSays polls the page at path until it holds want, failing the
// test at the deadline with the last page's text.
func waitPageSays(ctx context.Context, t *testing.T, pages *soakHTTP, path, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		code, body, err := pages.page(ctx, path)
		if err == nil && code == http.StatusOK && strings.Contains(body, want) {
			return
		}
		last = fmt.Sprintf("%d %v %s", code, err, body)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Fatalf("%s%s never said %q within %s; last:\n%s", pages.base, path, want, within, tail(last, 3000))
}

// TestHostsBackfillThroughTheBinary runs the built binary as two hosts on
// one database, each a serve with its workers on its own data folder.
// Without a content store each takes snapshots of a box of its own, host-a
// more than one run of its host work ships. Restarted with a bucket and the
// hosts' interval shortened, the Hosts page of each says, within a
// deadline, that every snapshot on it is in the content store: host-a's
// only after its work ran more than once, on the schedule alone. Then
// host-a's box moves to host-b from the bucket, byte-exact.
func TestHostsBackfillThroughTheBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	srv := s3test.Start(t)
	bucket := srv.Bucket(t)
	h := newBinHosts(t)
	a, baseA := h.start("host-a", nil, "serve")
	b, baseB := h.start("host-b", nil, "serve")
	tok, err := personToken(ctx, baseA, Password)
	if err != nil {
		t.Fatal(err)
	}
	onA, onB := newSoakHTTP(baseA, tok), newSoakHTTP(baseB, tok)
	amber, brisk := makeBox(ctx, t, onA, "amber-fox"), makeBox(ctx, t, onB, "brisk-lake")
	blob := make([]byte, 3<<20)
	_, _ = rand.Read(blob)
	if err := os.WriteFile(filepath.Join(h.boxDir("host-a", amber), "blob.bin"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	// More than one run ships: the backlog empties only if the hosts' job
	// runs again after its first run. A box keeps at most 5 snapshots a
	// person took, so host-a's are spread over boxes of its own.
	takeSnapshots(ctx, t, onA, "amber-fox", h.boxDir("host-a", amber), 5)
	for taken := 5; taken <= hosts.BackfillPerRun; taken += 5 {
		name := fmt.Sprintf("amber-fox-%d", taken/5)
		takeSnapshots(ctx, t, onA, name, h.boxDir("host-a", makeBox(ctx, t, onA, name)), 5)
	}
	takeSnapshots(ctx, t, onB, "brisk-lake", h.boxDir("host-b", brisk), 2)
	a.stop()
	b.stop()

	store := bucketEnv(bucket, "BOXSNAP_HOSTS_INTERVAL=5s")
	_, baseA = h.start("host-a", store, "serve")
	_, baseB = h.start("host-b", store, "serve")
	started := time.Now()
	everyShipped := hosts.UnshippedWords(0, 0)
	waitPageSays(ctx, t, signedIn(ctx, t, baseA), "/settings/hosts", everyShipped, 3*time.Minute)
	waitPageSays(ctx, t, signedIn(ctx, t, baseB), "/settings/hosts", everyShipped, 3*time.Minute)
	t.Logf("every snapshot of both hosts in the bucket %s after the restart", time.Since(started).Round(time.Second))

	onB = newSoakHTTP(baseB, tok)
	// host-a releases its copy once the box is host-b's: what it held is
	// kept aside to compare.
	before := filepath.Join(t.TempDir(), "amber-fox")
	if out, err := exec.Command("cp", "-a", h.boxDir("host-a", amber), before).CombinedOutput(); err != nil {
		t.Fatalf("keep host-a's amber-fox aside: %v\n%s", err, out)
	}
	var op struct {
		Operation struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"operation"`
	}
	if err := onB.do(ctx, "POST", "/api/v1/boxes/amber-fox/move?wait=true", map[string]string{"host": "host-b"}, &op); err != nil {
		t.Fatalf("move amber-fox to host-b: %v", err)
	}
	for deadline := time.Now().Add(3 * time.Minute); op.Operation.State == "running" && time.Now().Before(deadline); {
		if err := onB.do(ctx, "GET", "/api/v1/operations/"+op.Operation.ID+"?wait=true", nil, &op); err != nil {
			t.Fatal(err)
		}
	}
	if op.Operation.State != "done" {
		t.Fatalf("amber-fox's move to host-b: %+v", op.Operation)
	}
	sameFiles(t, before, h.boxDir("host-b", amber))
}

// sameFiles fails the test unless folder got holds the files of want,
// byte for byte, and no other; boxsnap's own folder (.boxsnap, where a
// restore writes the box's access file anew) aside.
func sameFiles(t *testing.T, want, got string) {
	t.Helper()
	read := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && p == filepath.Join(dir, ".boxsnap") {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = b
			return err
		})
		if err != nil {
			t.Fatalf("read %s: %v", dir, err)
		}
		return out
	}
	w, g := read(want), read(got)
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s is on host-b, not on host-a", name)
		}
	}
	for name, b := range w {
		if !bytes.Equal(g[name], b) {
			t.Errorf("%s: %d bytes on host-b, %d on host-a, not the same", name, len(g[name]), len(b))
		}
	}
}

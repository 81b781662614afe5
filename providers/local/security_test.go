package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/process"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// passable makes a test's temporary folders passable by others, as a
// data folder must be for the box's user to reach its box.
func passable(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBoxProcessIsNotRoot: a box's process runs as an unprivileged user
// (boxsnap-box, made when missing, when boxsnap runs as root), in its own
// session, in the box's folder, with only its template's environment and
// with its template's limits; inside bubblewrap where it is installed, it
// cannot write outside its folder nor see boxsnap's.
func TestBoxProcessIsNotRoot(t *testing.T) {
	t.Setenv("BOXSNAP_TEST_SECRET", "s3cret")
	root := filepath.Join(passable(t), "local")
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	outside := filepath.Join(root, "state", "outside-written")
	// The process waits for the test's go, so that its stat is read while
	// it runs.
	cmd := `until [ -e go ]; do sleep 0.05; done; id -u > uid; id -un > user; env > env; cat /proc/self/limits > limits; pwd > pwd;
ls ` + filepath.Join(root, "state") + ` > seen 2>&1; touch ` + outside + ` 2>/dev/null; touch /etc/boxsnap-box-test 2>/dev/null; echo done > done`
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxprocesstest1", Kind: "linux"},
		Command: cmd, Env: map[string]string{"GREETING": "hello"},
		Limits: providers.BoxLimits{MemoryBytes: 1 << 30, Processes: 200, OpenFiles: 64}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	p := b.procs[g.Ref]
	b.mu.Unlock()
	pid := p.cmd.Process.Pid
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("read the running process's stat: %v", err)
	}
	if err := os.WriteFile(filepath.Join(b.BoxDir(g), "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatal("the box's process did not end")
	}
	t.Cleanup(func() { _ = b.Release(context.Background(), g) })
	dir := b.BoxDir(g)
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			log, _ := os.ReadFile(b.Path(store.DirState, g.Ref+".log"))
			t.Fatalf("the process wrote no %s: %v\nits log: %s", name, err, log)
		}
		return strings.TrimSpace(string(data))
	}
	read("done")
	if uid := read("uid"); uid == "0" {
		t.Fatal("the box's process ran as root")
	}
	if os.Geteuid() == 0 {
		if u := read("user"); u != process.DefaultBoxUser {
			t.Fatalf("the box's process ran as %s, want %s", u, process.DefaultBoxUser)
		}
	}
	env := read("env")
	if !strings.Contains(env, "GREETING=hello") || strings.Contains(env, "BOXSNAP_TEST_SECRET") || strings.Contains(env, "HOME=") {
		t.Fatalf("the process's environment is not the template's alone:\n%s", env)
	}
	limits := read("limits")
	for line, want := range map[string]string{"Max open files": "64", "Max processes": "200", "Max data size": strconv.Itoa(1 << 30)} {
		found := false
		for _, l := range strings.Split(limits, "\n") {
			if f := strings.Fields(strings.TrimPrefix(l, line)); strings.HasPrefix(l, line) && len(f) >= 2 {
				found = f[0] == want && f[1] == want
			}
		}
		if !found {
			t.Errorf("%s is not %s:\n%s", line, want, limits)
		}
	}
	if read("pwd") != dir {
		t.Errorf("the process ran in %s, want its box's folder %s", read("pwd"), dir)
	}
	// Its own session: the session ID (field 6 of stat) is its own PID.
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:])); len(f) < 4 || f[3] != strconv.Itoa(pid) || f[2] != strconv.Itoa(pid) {
		t.Errorf("the process is not the leader of its own session and group: %s", stat)
	}
	if _, err := os.Stat("/etc/boxsnap-box-test"); err == nil {
		_ = os.Remove("/etc/boxsnap-box-test")
		t.Error("the box's process wrote in /etc")
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the box's process wrote in boxsnap's own folder")
	}
	if b.Bwrap != "" {
		if seen := read("seen"); strings.Contains(seen, g.Ref+".json") {
			t.Errorf("inside bubblewrap, the process saw boxsnap's state folder: %s", seen)
		}
	} else {
		t.Log("bubblewrap is not installed: the sandbox's part is not checked")
	}

	// A template naming root, or a user that does not exist, is refused.
	if os.Geteuid() == 0 {
		for _, u := range []string{"root", "no-such-user-here"} {
			g2, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxprocess" + strconv.Itoa(len(u)), Kind: "linux"}, Command: "true", User: u})
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Start(t.Context(), g2); !errors.Is(err, providers.ErrRefused) {
				t.Errorf("a process as %s: %v", u, err)
			}
		}
	}
}

// TestTemplatesStayInTheirFolder: a template is a folder's name inside the
// templates folder; a full path, "..", a name with a slash, or a link
// leading out is refused in words, and nothing is copied.
func TestTemplatesStayInTheirFolder(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	tmpl := filepath.Join(base, "templates")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{filepath.Join(tmpl, "node-dev"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.WriteFile(filepath.Join(tmpl, "node-dev", "package.json"), []byte("{}"), 0o644)
	_ = os.WriteFile(filepath.Join(secret, "key"), []byte("secret"), 0o600)
	if err := os.Symlink(secret, filepath.Join(tmpl, "leads-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("node-dev", filepath.Join(tmpl, "alias")); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: filepath.Join(base, "local"), Templates: tmpl, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	for i, c := range []struct{ source, words string }{
		{"/etc/ssh", "A box template's folder is a name inside the templates folder, not a full path."},
		{secret, "A box template's folder is a name inside the templates folder, not a full path."},
		{"..", "A box template's folder is one folder's name inside the templates folder: no slashes, no “..”."},
		{"../secret", "A box template's folder is one folder's name inside the templates folder: no slashes, no “..”."},
		{"node-dev/../../secret", "A box template's folder is one folder's name inside the templates folder: no slashes, no “..”."},
		{"leads-out", "The template folder leads-out is a link leading out of the templates folder."},
		{"missing", "No template folder named missing in the templates folder."},
	} {
		id := "bxtemplate" + strconv.Itoa(i)
		_, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: id}, Template: c.source})
		var refused *providers.RefusedError
		if !errors.As(err, &refused) || refused.Why != c.words {
			t.Errorf("template %q: %v, want %q", c.source, err, c.words)
		}
		if _, err := os.Lstat(b.Store.BoxDir(id)); err == nil {
			t.Errorf("template %q left a box folder", c.source)
		}
	}
	for _, ok := range []string{"node-dev", "alias"} {
		g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxfrom" + ok}, Template: ok})
		if err != nil {
			t.Fatalf("template %s: %v", ok, err)
		}
		if _, err := os.Stat(filepath.Join(b.BoxDir(g), "package.json")); err != nil {
			t.Fatalf("template %s was not copied: %v", ok, err)
		}
	}
}

// TestBoxCommandRunsBoxsnapFromTmp: a box's command may run boxsnap's own
// executable (the demo's web app) even where it was built under /tmp, which
// the sandbox makes private: it is bound back, read-only.
func TestBoxCommandRunsBoxsnapFromTmp(t *testing.T) {
	dir := passable(t)
	self := filepath.Join(dir, "boxsnap")
	if err := os.WriteFile(self, []byte("#!/bin/sh\necho ran > \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "local")
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second, Self: self})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: "bxselftest001", Kind: "linux"},
		Command: self + " ran; echo done > done"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Release(context.Background(), g) })
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	p := b.procs[g.Ref]
	b.mu.Unlock()
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatal("the box's process did not end")
	}
	got, err := os.ReadFile(filepath.Join(b.BoxDir(g), "ran"))
	if err != nil || strings.TrimSpace(string(got)) != "ran" {
		log, _ := os.ReadFile(b.Path(store.DirState, g.Ref+".log"))
		t.Fatalf("the box's command could not run %s (%v); its log: %s", self, err, log)
	}
}

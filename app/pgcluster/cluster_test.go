package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// logBuffer collects a logger's lines for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// start starts a test cluster and stops it at the end of the test.
func start(t *testing.T, opts Options) *Cluster {
	t.Helper()
	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return c
}

func connect(t *testing.T, c *Cluster) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), c.DSN("postgres"))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// expectedUID is the OS user the cluster must run as.
func expectedUID(t *testing.T) int {
	t.Helper()
	acct, err := clusterAccount()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 && (acct.uid == 0 || acct.name != "postgres") {
		t.Fatalf("as root the cluster must run as postgres, got %+v", acct)
	}
	if os.Geteuid() != 0 && acct.uid != os.Geteuid() {
		t.Fatalf("not root: the cluster must run as the current user, got %+v", acct)
	}
	return acct.uid
}

func ownerOf(t *testing.T, path string) (int, os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid), fi.Mode().Perm()
}

func processUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			uid, _ := strconv.Atoi(strings.Fields(rest)[0])
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return -1
}

func requireOneLine(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error naming %q, got none", parts)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not say %q", msg, p)
		}
	}
}

func requireAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists after a failed Start (err %v): nothing may be half-made", path, err)
	}
}

func TestKeepsDataAcrossStopAndStart(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	dir := filepath.Join(t.TempDir(), "postgres")
	opts := Options{DataDir: dir, ForTests: true, Logger: logs.logger()}

	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "made a new PostgreSQL cluster") || !strings.Contains(logs.String(), "took=") {
		t.Errorf("first Start must log that it made a new cluster and how long it took; log:\n%s", logs.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "PG_VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != strconv.Itoa(c.Version()) {
		t.Errorf("Version() = %d, the cluster's PG_VERSION says %s", c.Version(), got)
	}
	conn := connect(t, c)
	if _, err := conn.Exec(t.Context(), "CREATE TABLE kept (note text); INSERT INTO kept VALUES ('across restarts')"); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(t.Context())
	if err := c.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(t.Context()); err != nil {
		t.Errorf("a second Stop must be a no-op, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Stop the server must be down (postmaster.pid gone), got %v", err)
	}

	c2 := start(t, opts)
	var note string
	if err := connect(t, c2).QueryRow(t.Context(), "SELECT note FROM kept").Scan(&note); err != nil {
		t.Fatalf("the second Start must find the first one's table: %v", err)
	}
	if note != "across restarts" {
		t.Errorf("note = %q", note)
	}
	if !strings.Contains(logs.String(), "started the PostgreSQL cluster") {
		t.Errorf("second Start must log that it started the existing cluster; log:\n%s", logs.String())
	}
	if n := strings.Count(logs.String(), "msg=\"made a new PostgreSQL cluster\"") + strings.Count(logs.String(), "msg=\"started the PostgreSQL cluster\""); n != 2 {
		t.Errorf("each Start logs one line; log:\n%s", logs.String())
	}
}

func TestRunningCluster(t *testing.T) {
	t.Parallel()
	uid := expectedUID(t)
	var logs logBuffer
	dir := filepath.Join(t.TempDir(), "postgres")
	c := start(t, Options{DataDir: dir, ForTests: true, Logger: logs.logger()})
	conn := connect(t, c)

	var listen, dataDirectory string
	if err := conn.QueryRow(t.Context(), "SHOW listen_addresses").Scan(&listen); err != nil {
		t.Fatal(err)
	}
	if listen != "" {
		t.Errorf("listen_addresses = %q, want empty: no TCP listener", listen)
	}
	if err := conn.QueryRow(t.Context(), "SHOW data_directory").Scan(&dataDirectory); err != nil {
		t.Fatal(err)
	}
	if dataDirectory != dir {
		t.Errorf("data_directory = %q, want %q", dataDirectory, dir)
	}
	var fsync string
	if err := conn.QueryRow(t.Context(), "SHOW fsync").Scan(&fsync); err != nil {
		t.Fatal(err)
	}
	if fsync != "off" {
		t.Errorf("ForTests: fsync = %q, want off", fsync)
	}
	var jit string
	if err := conn.QueryRow(t.Context(), "SHOW jit").Scan(&jit); err != nil {
		t.Fatal(err)
	}
	if jit != "off" {
		t.Errorf("jit = %q, want off", jit)
	}

	// The server process and its files belong to the cluster's user.
	pid, alive := c.postmasterAlive()
	if !alive {
		t.Fatal("no live postmaster for a started cluster")
	}
	if got := processUID(t, pid); got != uid {
		t.Errorf("postgres runs as uid %d, want %d", got, uid)
	}
	if owner, mode := ownerOf(t, dir); owner != uid || mode != 0o700 {
		t.Errorf("data folder: owner %d mode %#o, want %d and 0700", owner, mode, uid)
	}
	if owner, mode := ownerOf(t, c.sockDir); owner != uid || mode != 0o700 {
		t.Errorf("socket folder: owner %d mode %#o, want %d and 0700", owner, mode, uid)
	}
	if n := len(socketPath(c.sockDir, c.port)); n > maxSocketPath {
		t.Errorf("socket path is %d bytes", n)
	}
	if fi, err := os.Stat(socketPath(c.sockDir, c.port)); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("no unix socket at %s: %v", socketPath(c.sockDir, c.port), err)
	}
	// No TCP socket of the postmaster: every socket inode it holds is a
	// unix one, none is in /proc/net/tcp or tcp6.
	tcp := tcpInodes(t)
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		link, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name())
		if inode, ok := strings.CutPrefix(link, "socket:["); ok && tcp[strings.TrimSuffix(inode, "]")] {
			t.Errorf("postmaster holds a TCP socket (%s)", link)
		}
	}
	// The server's own log goes to its file, not to boxsnap's logger.
	if b, err := os.ReadFile(c.LogFile()); err != nil || !strings.Contains(string(b), "database system is ready to accept connections") {
		t.Errorf("server log %s lacks the server's start line: %v", c.LogFile(), err)
	}
	if strings.Contains(logs.String(), "ready to accept connections") {
		t.Errorf("the server's log reached boxsnap's logger:\n%s", logs.String())
	}

	t.Run("a second Start on its data folder is refused", func(t *testing.T) {
		_, err := Start(t.Context(), Options{DataDir: dir, ForTests: true})
		requireOneLine(t, err, "data folder "+dir+" is in use by another boxsnap (pid "+strconv.Itoa(os.Getpid())+")")
		if err := conn.Ping(t.Context()); err != nil {
			t.Errorf("the first cluster must keep running: %v", err)
		}
	})
	t.Run("EnsureDatabase makes a database once", func(t *testing.T) {
		for range 2 { // the second call finds it
			if err := c.EnsureDatabase(t.Context(), "boxsnap app"); err != nil {
				t.Fatal(err)
			}
		}
		conn, err := pgx.Connect(t.Context(), c.DSN("boxsnap app"))
		if err != nil {
			t.Fatalf("DSN of a database with a space: %v", err)
		}
		defer conn.Close(context.Background())
		var name string
		if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil || name != "boxsnap app" {
			t.Errorf("current_database() = %q, %v", name, err)
		}
		requireOneLine(t, c.EnsureDatabase(t.Context(), ""), "database name")
	})

	// A shutdown's context is often cancelled already: Stop still stops.
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Stop(cancelled); err != nil {
		t.Fatal(err)
	}
	if _, alive := c.postmasterAlive(); alive {
		t.Error("the server still runs after Stop")
	}
	requireAbsent(t, c.sockDir)
}

func tcpInodes(t *testing.T) map[string]bool {
	t.Helper()
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			if fields := strings.Fields(line); len(fields) > 9 {
				inodes[fields[9]] = true
			}
		}
	}
	return inodes
}

// TestUnreachableParentGetsSearchBit: a data folder under a folder of mode
// 0700 (as /root is) still works: as root, the parent gets o+x, logged;
// otherwise the current user, who owns the folders, runs the cluster and
// nothing changes.
func TestUnreachableParentGetsSearchBit(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	closed := filepath.Join(t.TempDir(), "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	c := start(t, Options{DataDir: filepath.Join(closed, "data", "postgres"), ForTests: true, Logger: logs.logger()})
	if err := connect(t, c).Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, mode := ownerOf(t, closed)
	if os.Geteuid() == 0 {
		if mode != 0o701 {
			t.Errorf("as root, the closed parent must gain o+x only: mode %#o, want 0701", mode)
		}
		if !strings.Contains(logs.String(), "folder="+closed+" ") {
			t.Errorf("each folder changed must be logged; log:\n%s", logs.String())
		}
	} else if mode != 0o700 {
		t.Errorf("not root: folders must stay as they are, mode %#o", mode)
	}
}

func TestRecoversAfterPostgresKilled(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	dir := filepath.Join(t.TempDir(), "postgres")
	// Durable, as kept data is: with ForTests, synchronous_commit=off may
	// lose the last commits when postgres is killed, by design.
	opts := Options{DataDir: dir, Logger: logs.logger()}
	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, c)
	if _, err := conn.Exec(t.Context(), "CREATE TABLE survived (n int); INSERT INTO survived VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	pid, alive := c.postmasterAlive()
	if !alive {
		t.Fatal("no live postmaster")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err != nil {
		t.Fatalf("a SIGKILLed postgres leaves a stale postmaster.pid: %v", err)
	}
	if err := c.Stop(t.Context()); err != nil {
		t.Errorf("Stop of a dead server must succeed: %v", err)
	}
	c2 := start(t, opts)
	var n int
	if err := connect(t, c2).QueryRow(t.Context(), "SELECT n FROM survived").Scan(&n); err != nil || n != 7 {
		t.Fatalf("after a crash the cluster recovers its committed rows: n=%d err=%v", n, err)
	}
}

// TestStopsServerOfKilledBoxsnap: a boxsnap killed without Stop leaves its
// server running and its lock released; the next Start stops that server
// and starts afresh.
func TestStopsServerOfKilledBoxsnap(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	dir := filepath.Join(t.TempDir(), "postgres")
	opts := Options{DataDir: dir, ForTests: true, Logger: logs.logger()}
	c, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := c.postmasterAlive()
	c.lock.release() // what the kernel does when boxsnap dies
	t.Cleanup(func() {
		if _, alive := c.postmasterAlive(); alive && c.realDir != "" {
			_ = syscall.Kill(old, syscall.SIGQUIT)
		}
	})

	c2 := start(t, opts)
	pid, alive := c2.postmasterAlive()
	if !alive || pid == old {
		t.Errorf("want a new server, got pid %d (old %d, alive %v)", pid, old, alive)
	}
	if !strings.Contains(logs.String(), "left running by an earlier boxsnap") {
		t.Errorf("stopping an orphan server must be logged; log:\n%s", logs.String())
	}
	if err := connect(t, c2).Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	// A zombie (not yet reaped) has no current folder any more: it is gone
	// for PostgreSQL's purposes.
	for {
		if _, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); err != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still alive", pid)
		}
		// Yield to the process being reaped; a poll with a deadline, not a
		// timed assertion.
		<-time.After(5 * time.Millisecond)
	}
}

func TestNoBinaries(t *testing.T) {
	t.Parallel()
	_, err := findBinDir("", t.TempDir(), filepath.Join(t.TempDir(), "none"), 0)
	if err == nil || err.Error() != "no PostgreSQL binaries found on PATH or under /usr/lib/postgresql/*/bin: install them, e.g. apt-get install postgresql-15" {
		t.Errorf("no binaries anywhere: got %v", err)
	}

	empty := t.TempDir()
	dir := filepath.Join(t.TempDir(), "postgres")
	_, err = Start(t.Context(), Options{DataDir: dir, BinDir: empty})
	requireOneLine(t, err, "no PostgreSQL initdb, pg_ctl, postgres in BinDir "+empty)
	requireAbsent(t, dir)
	requireAbsent(t, dir+".lock")
}

func TestFindsBinariesOfTheClustersVersion(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, v := range []string{"14", "16"} {
		bin := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
			if err := os.WriteFile(filepath.Join(bin, name), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, err := findBinDir("", "", root, 0); err != nil || got != filepath.Join(root, "16", "bin") {
		t.Errorf("a new cluster takes the newest: %q, %v", got, err)
	}
	if got, err := findBinDir("", "", root, 14); err != nil || got != filepath.Join(root, "14", "bin") {
		t.Errorf("a version-14 cluster takes 14's binaries: %q, %v", got, err)
	}
}

func TestUnwritableDataFolder(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "postgres")
	_, err := Start(t.Context(), Options{DataDir: dir, ForTests: true})
	requireOneLine(t, err, "the data folder "+dir+" cannot be made or written", "not a directory", "choose a folder")

	_, err = Start(t.Context(), Options{DataDir: file, ForTests: true})
	requireOneLine(t, err, "the data folder "+file+" is a file, not a folder")
}

func TestOtherMajorVersionRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "postgres")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "PG_VERSION"), []byte("9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := findBinDir("", os.Getenv("PATH"), libRoot, 0)
	if err != nil {
		t.Fatal(err)
	}
	major, err := majorVersion(t.Context(), bin)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(t.Context(), Options{DataDir: dir, ForTests: true})
	requireOneLine(t, err, fmt.Sprintf("the data folder %s holds a PostgreSQL 9 cluster, and this machine's binaries are PostgreSQL %d: ", dir, major), "pg_upgrade")
	requireAbsent(t, dir+".lock")
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder must be left as it was, holds %d entries", len(entries))
	}
}

func TestNotEmptyFolderWithoutClusterRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "postgres")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start(t.Context(), Options{DataDir: dir, ForTests: true})
	requireOneLine(t, err, "the data folder "+dir+" is not empty but holds no PostgreSQL cluster")
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Error("the folder's files must be left alone")
	}
}

// TestFailedInitdbLeavesNothing breaks initdb on purpose (a BinDir whose
// initdb fails, beside the real pg_ctl and postgres) and checks that no
// half-made folder is left.
func TestFailedInitdbLeavesNothing(t *testing.T) {
	t.Parallel()
	real, err := findBinDir("", os.Getenv("PATH"), libRoot, 0)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range []string{"pg_ctl", "postgres"} {
		if err := os.Symlink(filepath.Join(real, name), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\necho 'initdb: error: the disk is full' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "initdb"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "postgres")
	_, err = Start(t.Context(), Options{DataDir: dir, BinDir: bin, ForTests: true})
	requireOneLine(t, err, "make a PostgreSQL cluster in "+dir, "the disk is full")
	requireAbsent(t, dir)
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if e.Name() != "postgres.lock" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	// An empty folder (a mount point, say) is filled in place and emptied
	// again on failure.
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = Start(t.Context(), Options{DataDir: dir, BinDir: bin, ForTests: true})
	requireOneLine(t, err, "the disk is full")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the empty folder must be left empty, holds %d entries", len(entries))
	}
}

func TestSocketFolderTooLong(t *testing.T) {
	t.Parallel()
	long := "/tmp/" + strings.Repeat("s", 100)
	dir := filepath.Join(t.TempDir(), "postgres")
	_, err := Start(t.Context(), Options{DataDir: dir, SocketDir: long, ForTests: true})
	requireOneLine(t, err, "the socket folder "+long+" is too long for a unix socket", "give a shorter Options.SocketDir")
	requireAbsent(t, dir)
	if d := defaultSocketDir("/"+strings.Repeat("d", 200), 5432); len(socketPath(d, 5432)) > maxSocketPath {
		t.Errorf("the default socket folder must be short whatever the data folder: %s", d)
	}
}

// TestRunsAsCurrentUserWhenNotRoot runs a cluster as a user that is not
// root. As root it re-runs itself as the OS user nobody; as anyone else it
// runs the checks directly.
func TestRunsAsCurrentUserWhenNotRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsNobody(t, "TestRunsAsCurrentUserWhenNotRoot")
		return
	}
	uid := os.Geteuid()
	base := t.TempDir()
	dir := filepath.Join(base, "postgres")
	c := start(t, Options{DataDir: dir, ForTests: true})
	pid, _ := c.postmasterAlive()
	if got := processUID(t, pid); got != uid {
		t.Errorf("postgres runs as uid %d, want the current user %d", got, uid)
	}
	if owner, mode := ownerOf(t, dir); owner != uid || mode != 0o700 {
		t.Errorf("data folder: owner %d mode %#o", owner, mode)
	}
	if err := connect(t, c).Ping(t.Context()); err != nil {
		t.Fatal(err)
	}

	// A folder this user may not write.
	ro := filepath.Join(base, "read-only")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	_, err := Start(t.Context(), Options{DataDir: filepath.Join(ro, "postgres"), ForTests: true})
	requireOneLine(t, err, "the data folder "+filepath.Join(ro, "postgres")+" cannot be", "permission denied")
	requireAbsent(t, filepath.Join(ro, "postgres"))
}

// runAsNobody runs the named test of this test binary as the OS user
// nobody, from a copy of the binary that user can read.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	const nobody = 65534
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "pgcluster-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pgcluster.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.run", "^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as nobody: %v\n%s", name, err, out)
	}
}

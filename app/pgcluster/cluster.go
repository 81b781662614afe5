package pgcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	// DefaultPort names the unix socket (.s.PGSQL.5432); there is no TCP
	// listener, so it never conflicts with another server's TCP port.
	DefaultPort = 5432

	// Superuser is the database role the cluster is made with, and the one
	// DSN connects as. Authentication is "trust": only the cluster's OS user
	// (and root) can reach the socket folder, mode 0700.
	Superuser = "postgres"

	// maxSocketPath is the longest unix socket path Linux takes (sun_path is
	// 108 bytes with its closing NUL).
	maxSocketPath = 107

	// logName is the server's own log, in the data folder (pg_ctl -l).
	logName = "postgresql.log"

	// maxLogBytes is the size past which Start moves the server's log to
	// postgresql.log.1, so that a long-lived data folder's log stays bounded.
	maxLogBytes = 16 << 20

	// startTimeout bounds pg_ctl's wait for the server when ctx has no
	// deadline (crash recovery of a big cluster can take a while).
	startTimeout = 60 * time.Second

	// leftoverWait bounds the wait for the processes of a killed server to
	// exit; they notice the postmaster's death within milliseconds.
	leftoverWait = 10 * time.Second

	// stopTimeout bounds pg_ctl's wait for a fast shutdown when ctx has no
	// deadline.
	stopTimeout = 30 * time.Second
)

// Options says where and how to run a cluster. Only DataDir is required.
type Options struct {
	// DataDir is the cluster's folder, e.g. <boxsnap data>/postgres; it is
	// made (with initdb) if missing or empty.
	DataDir string
	// SocketDir is the folder of the unix socket. Default: a short folder
	// under os.TempDir() (or /tmp) named by a hash of DataDir, removed at
	// Stop.
	SocketDir string
	// BinDir holds initdb, pg_ctl and postgres. Default: the folder of the
	// binaries of the data folder's major version under
	// /usr/lib/postgresql/*/bin if it already holds a cluster, then the
	// folder of pg_ctl on PATH, then the newest /usr/lib/postgresql/*/bin.
	BinDir string
	// Port names the socket file (.s.PGSQL.<Port>); default DefaultPort.
	// The server opens no TCP port (listen_addresses='').
	Port int
	// ForTests turns durability off (fsync, synchronous_commit,
	// full_page_writes, and initdb --no-sync) for speed. Never for data
	// that is kept.
	ForTests bool
	// Logger receives Start's and Stop's one-line reports; default: none.
	Logger *slog.Logger
}

// Cluster is a running private PostgreSQL cluster. Its methods are safe for
// concurrent use.
type Cluster struct {
	dataDir  string // absolute
	realDir  string // dataDir with symbolic links resolved, as /proc shows a process's cwd
	sockDir  string
	dropSock bool // Stop removes sockDir: Start made it, or it is the default one
	port     int
	forTests bool
	bin      binaries
	acct     account
	logger   *slog.Logger

	mu      sync.Mutex
	lock    *folderLock
	stopped bool
}

// Start makes the cluster on first use, then starts it and waits until it
// accepts connections. Every failure is one line that names the problem and
// the fix, and leaves no half-made data folder behind. A server left running
// by a killed boxsnap is stopped and started afresh; a stale postmaster.pid
// is handled by PostgreSQL itself.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	began := time.Now()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dataDir, port, err := checkPlace(opts)
	if err != nil {
		return nil, err
	}
	binDir, major, err := findBinaries(ctx, opts.BinDir, dataDir)
	if err != nil {
		return nil, err
	}
	acct, err := clusterAccount()
	if err != nil {
		return nil, err
	}
	sockDir, defaultSock, err := socketFolder(opts.SocketDir, dataDir, port)
	if err != nil {
		return nil, err
	}

	parent := filepath.Dir(dataDir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, unwritable(dataDir, err)
	}
	lock, err := lockDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		dataDir: dataDir, sockDir: sockDir, port: port, forTests: opts.ForTests,
		bin: binaries{dir: binDir, major: major}, acct: acct, logger: logger, lock: lock,
	}
	started := false
	defer func() {
		if !started {
			lock.release()
		}
	}()
	made, err := c.readyDataDir(ctx, parent)
	if err != nil {
		return nil, err
	}
	if c.realDir, err = filepath.EvalSymlinks(dataDir); err != nil {
		return nil, fmt.Errorf("data folder %s: %w", dataDir, err)
	}
	if err := c.makeSocketDir(defaultSock); err != nil {
		return nil, err
	}
	if err := c.clearLeftovers(ctx); err != nil {
		return nil, err
	}
	if err := c.pgctlStart(ctx); err != nil {
		if c.dropSock {
			_ = os.RemoveAll(c.sockDir)
		}
		return nil, err
	}
	started = true
	took := time.Since(began).Round(time.Millisecond)
	if made {
		logger.Info("made a new PostgreSQL cluster", "dir", dataDir, "version", major, "socket", sockDir, "took", took)
	} else {
		logger.Info("started the PostgreSQL cluster", "dir", dataDir, "version", major, "socket", sockDir, "took", took)
	}
	return c, nil
}

// checkPlace answers the data folder, made absolute, and the port, the
// default where none is given, or why either cannot serve.
func checkPlace(opts Options) (dataDir string, port int, err error) {
	if opts.DataDir == "" {
		return "", 0, errors.New("no data folder given for the PostgreSQL cluster: set Options.DataDir")
	}
	dataDir, err = filepath.Abs(opts.DataDir)
	if err != nil {
		return "", 0, fmt.Errorf("data folder %s: %w", opts.DataDir, err)
	}
	port = opts.Port
	if port == 0 {
		port = DefaultPort
	}
	if port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("port %d is out of range: give Options.Port between 1 and 65535, or 0 for %d", opts.Port, DefaultPort)
	}
	return dataDir, port, nil
}

// findBinaries finds PostgreSQL's binaries and their major version, and
// refuses a data folder that holds a cluster of another major version.
func findBinaries(ctx context.Context, given, dataDir string) (binDir string, major int, err error) {
	state, have, err := inspect(dataDir)
	if err != nil {
		return "", 0, err
	}
	binDir, err = findBinDir(given, os.Getenv("PATH"), libRoot, have)
	if err != nil {
		return "", 0, err
	}
	major, err = majorVersion(ctx, binDir)
	if err != nil {
		return "", 0, err
	}
	if state == dirCluster && have != major {
		return "", 0, fmt.Errorf("the data folder %s holds a PostgreSQL %d cluster, and this machine's binaries are PostgreSQL %d: "+
			"install PostgreSQL %d's binaries (e.g. apt-get install postgresql-%d), or upgrade the cluster with pg_upgrade, or move the folder away to start afresh",
			dataDir, have, major, have, have)
	}
	return binDir, major, nil
}

// socketFolder answers the folder of the cluster's unix socket, made
// absolute (the default beside the data folder where none is given, and
// then true), or why its socket's path would be too long.
func socketFolder(given, dataDir string, port int) (string, bool, error) {
	sockDir, defaultSock := given, false
	if sockDir == "" {
		sockDir, defaultSock = defaultSocketDir(dataDir, port), true
	}
	sockDir, err := filepath.Abs(sockDir)
	if err != nil {
		return "", false, fmt.Errorf("socket folder %s: %w", given, err)
	}
	if n := len(socketPath(sockDir, port)); n > maxSocketPath {
		return "", false, fmt.Errorf("the socket folder %s is too long for a unix socket (%d bytes with the socket's name, at most %d): give a shorter Options.SocketDir",
			sockDir, n, maxSocketPath)
	}
	return sockDir, defaultSock, nil
}

// readyDataDir makes the cluster in its data folder, locked now, or takes
// over the one there, and answers whether it made it. It looks again
// now that the folder is ours: another boxsnap may have made it while
// this one checked the binaries.
func (c *Cluster) readyDataDir(ctx context.Context, parent string) (bool, error) {
	state, have, err := inspect(c.dataDir)
	if err != nil {
		return false, err
	}
	if err := c.acct.makeReachable(parent, c.logger); err != nil {
		return false, err
	}
	switch state {
	case dirMissing, dirEmpty:
		if err := c.initdb(ctx, state); err != nil {
			return false, err
		}
		return true, nil
	case dirCluster:
		if have != c.bin.major {
			return false, fmt.Errorf("the data folder %s holds a PostgreSQL %d cluster, and this machine's binaries are PostgreSQL %d: move the folder away or use PostgreSQL %d", c.dataDir, have, c.bin.major, have)
		}
		return false, c.acct.own(c.dataDir, 0o700, true)
	default:
		return false, fmt.Errorf("the data folder %s is not empty but holds no PostgreSQL cluster (no PG_VERSION): move its files away, or choose another data folder", c.dataDir)
	}
}

// DSN is a pgx connection string for database over the unix socket, as the
// superuser.
func (c *Cluster) DSN(database string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		dsnQuote(c.sockDir), c.port, Superuser, dsnQuote(database))
}

// Version is the major version of the running server (15 for 15.18).
func (c *Cluster) Version() int { return c.bin.major }

// DataDir is the cluster's folder, absolute.
func (c *Cluster) DataDir() string { return c.dataDir }

// LogFile is the server's own log.
func (c *Cluster) LogFile() string { return filepath.Join(c.dataDir, logName) }

// EnsureDatabase makes the database name unless it exists.
func (c *Cluster) EnsureDatabase(ctx context.Context, name string) error {
	if name == "" || len(name) > 63 {
		return fmt.Errorf("database name %q: give 1 to 63 bytes", name)
	}
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("ensure database %s: %w", name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("ensure database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: made meanwhile
		return nil
	}
	if err != nil {
		return fmt.Errorf("ensure database %s: %w", name, err)
	}
	return nil
}

// Stop shuts the server down in fast mode (open transactions are rolled back,
// connections closed), removes the socket folder and releases the data
// folder. It is idempotent. A server that has already died counts as
// stopped. Stop runs even when ctx is already cancelled, as a shutdown's
// context often is; a deadline of ctx not yet passed bounds its wait.
func (c *Cluster) Stop(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	began := time.Now()
	wait := timeoutSeconds(ctx, stopTimeout)
	if ctx.Err() != nil {
		wait = int(stopTimeout / time.Second)
	}
	out, err := c.run(context.WithoutCancel(ctx), false, "pg_ctl", "stop", "-D", c.dataDir, "-m", "fast", "-w", "-s",
		"-t", strconv.Itoa(wait))
	if err != nil {
		if pid, alive := c.postmasterAlive(); alive {
			return fmt.Errorf("stop the PostgreSQL cluster in %s (pid %d): %s: see %s", c.dataDir, pid, oneLine(out, err), c.LogFile())
		}
		c.logger.Warn("the PostgreSQL server had already stopped", "dir", c.dataDir)
	} else {
		c.logger.Info("stopped the PostgreSQL cluster", "dir", c.dataDir, "took", time.Since(began).Round(time.Millisecond))
	}
	if c.dropSock {
		_ = os.RemoveAll(c.sockDir)
	}
	c.lock.release()
	c.stopped = true
	return nil
}

type dirState int

const (
	dirMissing dirState = iota
	dirEmpty
	dirCluster
	dirOther
)

// inspect says what the data folder holds, and the major version of its
// cluster (PG_VERSION) if it holds one.
func inspect(dataDir string) (dirState, int, error) {
	fi, err := os.Stat(dataDir)
	if errors.Is(err, fs.ErrNotExist) {
		return dirMissing, 0, nil
	}
	if err != nil {
		return 0, 0, unwritable(dataDir, err)
	}
	if !fi.IsDir() {
		return 0, 0, fmt.Errorf("the data folder %s is a file, not a folder: move it away, or choose another data folder", dataDir)
	}
	b, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION"))
	if err == nil {
		v, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return 0, 0, fmt.Errorf("the data folder %s has a PG_VERSION that is not a version (%q): move the folder away, or choose another data folder", dataDir, strings.TrimSpace(string(b)))
		}
		return dirCluster, v, nil
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return 0, 0, unwritable(dataDir, err)
	}
	if len(entries) == 0 {
		return dirEmpty, 0, nil
	}
	return dirOther, 0, nil
}

func unwritable(dataDir string, err error) error {
	return fmt.Errorf("the data folder %s cannot be made or written: %w: choose a folder boxsnap may write, or fix the permissions", dataDir, err)
}

// initdb makes the cluster. A missing data folder is made as a temporary
// folder beside it and renamed into place once initdb has succeeded; an
// empty one (perhaps a mount point, which cannot be renamed) is filled in
// place and emptied again if initdb fails.
func (c *Cluster) initdb(ctx context.Context, state dirState) error {
	parent, base := filepath.Dir(c.dataDir), filepath.Base(c.dataDir)
	prefix := "." + base + ".initdb-"
	target := c.dataDir
	if state == dirMissing {
		// The lock is held: a folder with this prefix is left from an
		// interrupted initdb.
		if entries, err := os.ReadDir(parent); err == nil {
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), prefix) {
					_ = os.RemoveAll(filepath.Join(parent, e.Name()))
				}
			}
		}
		tmp, err := os.MkdirTemp(parent, prefix)
		if err != nil {
			return unwritable(c.dataDir, err)
		}
		target = tmp
	}
	undo := func() {
		if target != c.dataDir {
			_ = os.RemoveAll(target)
			return
		}
		entries, _ := os.ReadDir(target)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(target, e.Name()))
		}
	}
	if err := c.acct.own(target, 0o700, false); err != nil {
		undo()
		return unwritable(c.dataDir, err)
	}
	args := []string{"-D", target, "-U", Superuser, "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8"}
	if c.forTests {
		args = append(args, "--no-sync")
	}
	if out, err := c.run(ctx, false, "initdb", args...); err != nil {
		undo()
		return fmt.Errorf("make a PostgreSQL cluster in %s: initdb: %s", c.dataDir, oneLine(out, err))
	}
	if target != c.dataDir {
		if err := os.Rename(target, c.dataDir); err != nil {
			undo()
			return unwritable(c.dataDir, err)
		}
		if !c.forTests {
			if d, err := os.Open(parent); err == nil {
				_ = d.Sync()
				_ = d.Close()
			}
		}
	}
	return nil
}

// defaultSocketDir is a short folder named by a hash of the data folder, so
// that the same data folder always has the same socket folder and two data
// folders never share one.
func defaultSocketDir(dataDir string, port int) string {
	sum := sha256.Sum256([]byte(dataDir))
	name := "boxsnap-pg-" + hex.EncodeToString(sum[:8])
	dir := filepath.Join(os.TempDir(), name)
	if len(socketPath(dir, port)) > maxSocketPath {
		dir = filepath.Join("/tmp", name)
	}
	return dir
}

func socketPath(dir string, port int) string {
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

// makeSocketDir makes the socket folder, mode 0700, owned by the cluster's
// OS user. An existing folder must be a real folder of that user or root:
// one of anybody else in /tmp could be a trap.
func (c *Cluster) makeSocketDir(isDefault bool) error {
	fi, err := os.Lstat(c.sockDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(c.sockDir), 0o755); err != nil {
			return fmt.Errorf("make the socket folder %s: %w: give Options.SocketDir a folder boxsnap may write", c.sockDir, err)
		}
		if err := os.Mkdir(c.sockDir, 0o700); err != nil {
			return fmt.Errorf("make the socket folder %s: %w: give Options.SocketDir a folder boxsnap may write", c.sockDir, err)
		}
		c.dropSock = true
	case err != nil:
		return fmt.Errorf("socket folder %s: %w", c.sockDir, err)
	case !fi.IsDir():
		return fmt.Errorf("the socket folder %s is not a folder: remove it, or give another Options.SocketDir", c.sockDir)
	default:
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != c.acct.uid && st.Uid != 0 {
			return fmt.Errorf("the socket folder %s belongs to uid %d, not to the cluster's user %s: remove it, or give another Options.SocketDir", c.sockDir, st.Uid, c.acct.name)
		}
		c.dropSock = isDefault
	}
	if err := c.acct.makeReachable(filepath.Dir(c.sockDir), c.logger); err != nil {
		return err
	}
	if err := c.acct.own(c.sockDir, 0o700, false); err != nil {
		return fmt.Errorf("socket folder: %w", err)
	}
	return nil
}

// clearLeftovers deals with what a killed boxsnap leaves. The lock is held,
// so any server running on this data folder is an orphan of an earlier
// boxsnap: it is stopped (fast), to start again with this Start's options.
// Processes of a killed server exit by themselves once they notice; they are
// waited for, since PostgreSQL refuses to start while they hold its shared
// memory. A stale postmaster.pid is left to PostgreSQL, which checks it.
func (c *Cluster) clearLeftovers(ctx context.Context) error {
	if pid, alive := c.postmasterAlive(); alive {
		c.logger.Warn("stopping a PostgreSQL server left running by an earlier boxsnap", "dir", c.dataDir, "pid", pid)
		if out, err := c.run(ctx, false, "pg_ctl", "stop", "-D", c.dataDir, "-m", "fast", "-w", "-s",
			"-t", strconv.Itoa(timeoutSeconds(ctx, stopTimeout))); err != nil {
			return fmt.Errorf("stop the PostgreSQL server (pid %d) an earlier boxsnap left running in %s: %s: stop it (kill -INT %d) and start again",
				pid, c.dataDir, oneLine(out, err), pid)
		}
	}
	deadline := time.Now().Add(leftoverWait)
	for {
		pids := processesIn(c.realDir)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("old PostgreSQL processes (pids %s) still run in the data folder %s: end them (kill %s) and start again",
				joinInts(pids), c.dataDir, joinInts(pids))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for old PostgreSQL processes in %s to exit: %w", c.dataDir, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// pgctlStart starts the server with pg_ctl and waits until it accepts
// connections. The server runs in its own process group, so a Ctrl-C in a
// terminal reaches boxsnap only, and boxsnap stops it after its own work.
func (c *Cluster) pgctlStart(ctx context.Context) error {
	logFile := c.LogFile()
	var offset int64
	if fi, err := os.Stat(logFile); err == nil {
		offset = fi.Size()
		if fi.Size() > maxLogBytes {
			if err := os.Rename(logFile, logFile+".1"); err == nil {
				offset = 0
			}
		}
	}
	// jit=off: boxsnap's queries are short lookups and writes by index, and
	// PostgreSQL's JIT once spent 1.5 s compiling a plan it had
	// mis-estimated as large.
	serverArgs := []string{"-c", "listen_addresses=", "-k", c.sockDir, "-p", strconv.Itoa(c.port), "-c", "jit=off"}
	if c.forTests {
		serverArgs = append(serverArgs, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	quoted := make([]string, len(serverArgs))
	for i, a := range serverArgs {
		quoted[i] = shellQuote(a) // pg_ctl runs postgres through /bin/sh
	}
	out, err := c.run(ctx, true, "pg_ctl", "start", "-D", c.dataDir, "-l", logFile, "-w", "-s",
		"-t", strconv.Itoa(timeoutSeconds(ctx, startTimeout)), "-o", strings.Join(quoted, " "))
	if err != nil {
		reason := oneLine(out, err)
		if line := lastLogProblem(logFile, offset); line != "" {
			reason = line
		}
		// pg_ctl may give up waiting on a server that is still starting.
		if _, alive := c.postmasterAlive(); alive {
			_, _ = c.run(context.WithoutCancel(ctx), false, "pg_ctl", "stop", "-D", c.dataDir, "-m", "immediate", "-w", "-s")
		}
		return fmt.Errorf("start the PostgreSQL cluster in %s: %s: see %s", c.dataDir, reason, logFile)
	}
	return nil
}

// run runs one of the cluster's programs as the cluster's OS user, from /
// (the caller's folder may be closed to that user), without the PG*
// variables of boxsnap's environment, which would change what they do.
func (c *Cluster) run(ctx context.Context, ownGroup bool, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, c.bin.path(name), args...)
	cmd.Dir = "/"
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	attr := c.acct.sysProcAttr()
	if ownGroup {
		if attr == nil {
			attr = &syscall.SysProcAttr{}
		}
		attr.Setpgid = true
	}
	cmd.SysProcAttr = attr
	return cmd.CombinedOutput()
}

// postmasterAlive reads the pid in postmaster.pid and says whether that
// process is alive and runs in this data folder (a reused pid is not).
func (c *Cluster) postmasterAlive() (int, bool) {
	b, err := os.ReadFile(filepath.Join(c.dataDir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, false
	}
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	return pid, err == nil && cwd == c.realDir
}

// processesIn lists the processes whose current folder is dir: a
// PostgreSQL server and its children run in their data folder.
func processesIn(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && cwd == dir {
			pids = append(pids, pid)
		}
	}
	return pids
}

// lastLogProblem is the last FATAL, PANIC or ERROR line the server wrote to
// its log after offset, or its last line.
func lastLogProblem(logFile string, offset int64) string {
	f, err := os.Open(logFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > int64(len(b)) {
		offset = fi.Size() - int64(len(b))
	}
	n, _ := f.ReadAt(b, offset)
	lines := strings.Split(strings.TrimSpace(string(b[:n])), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		for _, level := range []string{"FATAL:", "PANIC:", "ERROR:"} {
			if strings.Contains(lines[i], level) {
				return strings.TrimSpace(lines[i])
			}
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// oneLine makes a program's output and exit status one line: its last
// non-empty line says what went wrong.
func oneLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return err.Error()
	}
	return last + " (" + err.Error() + ")"
}

func timeoutSeconds(ctx context.Context, def time.Duration) int {
	d := def
	if deadline, ok := ctx.Deadline(); ok {
		d = time.Until(deadline)
	}
	if s := int((d + time.Second - 1) / time.Second); s > 0 {
		return s
	}
	return 1
}

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dsnQuote quotes a value of a key=value connection string.
func dsnQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, ` '\`) {
		return s
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

// RunningDSN is the DSN of a cluster that another boxsnap process runs in
// dataDir on the default socket folder and port, when its socket is there:
// `boxsnap work` and `boxsnap doctor` beside a `boxsnap serve` on the
// embedded default use it instead of starting a second cluster.
func RunningDSN(dataDir, database string) (string, bool) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", false
	}
	dir := defaultSocketDir(abs, DefaultPort)
	if _, err := os.Stat(socketPath(dir, DefaultPort)); err != nil {
		return "", false
	}
	c := &Cluster{sockDir: dir, port: DefaultPort}
	return c.DSN(database), true
}

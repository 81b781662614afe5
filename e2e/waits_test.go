package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// The waits here wake at the change a test waits for (a commit that wrote
// a table's rows, an entry written in a folder, a process's end), never at
// a tick; each is bounded by a context, whose end fails the wait.

// rowWatch hears each commit that writes rows of the tables it watches:
// watchRows adds to the test's database a trigger on each that notifies
// on each row written, so a wait on those rows wakes at the commit that
// changed them.
type rowWatch struct{ conn *pgx.Conn }

// watchRows adds the trigger on tables to the database dsn names and
// listens for it on its own connection, which closes with the test.
// channel names the notification: one per watch.
func watchRows(ctx context.Context, t *testing.T, dsn, channel string, tables ...string) *rowWatch {
	t.Helper()
	conn, err := pgx.Connect(ctx, strings.TrimSuffix(dsn, " pool_max_conns=12"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	sqls := []string{`CREATE OR REPLACE FUNCTION e2e_rows_changed() RETURNS trigger LANGUAGE plpgsql AS
		$$BEGIN PERFORM pg_notify(TG_ARGV[0], ''); RETURN NULL; END$$`}
	for _, table := range tables {
		sqls = append(sqls, `CREATE OR REPLACE TRIGGER `+channel+` AFTER INSERT OR UPDATE OR DELETE ON `+table+`
			FOR EACH ROW EXECUTE FUNCTION e2e_rows_changed('`+channel+`')`)
	}
	for _, sql := range append(sqls, `LISTEN `+channel) {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("watch %s: %v", strings.Join(tables, ", "), err)
		}
	}
	return &rowWatch{conn: conn}
}

// until asks ok at once and again after each commit that wrote the
// watched rows since it last asked, until ok answers true; false when it
// has not within d.
func (w *rowWatch) until(ctx context.Context, d time.Duration, ok func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for !ok() {
		if _, err := w.conn.WaitForNotification(ctx); err != nil {
			return false
		}
	}
	return true
}

// waitFor asks ok at once and after each commit that wrote the watched
// rows, until it holds; it fails the test with what at the context's end.
func (w *rowWatch) waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		if _, err := w.conn.WaitForNotification(ctx); err != nil {
			t.Fatalf("%s: never happened (%v)", what, err)
		}
	}
}

// riverLeader is the River client that leads now (its ID), "" while none
// does: the one process that runs the periodic jobs.
func riverLeader(ctx context.Context, conn *pgx.Conn) string {
	var id string
	_ = conn.QueryRow(ctx, "SELECT leader_id FROM river_leader").Scan(&id)
	return id
}

// dirWatch hears each entry made, written, renamed or removed in the
// folders it watches (inotify), and in the folders made beneath them down
// to its depth.
type dirWatch struct {
	f     *os.File
	depth map[int]int // a watch's descriptor: its folder's depth
	path  map[int]string
	max   int
}

// watchDirs watches each of dirs, and each folder beneath one, made
// before or after, down to depth levels below it (0: the folder alone);
// the watch ends with the test. Each of dirs must be there.
func watchDirs(t *testing.T, depth int, dirs ...string) *dirWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	w := &dirWatch{f: os.NewFile(uintptr(fd), "inotify"), depth: map[int]int{}, path: map[int]string{}, max: depth}
	t.Cleanup(func() { _ = w.f.Close() })
	for _, d := range dirs {
		if err := w.add(d, 0); err != nil {
			t.Fatalf("watch %s: %v", d, err)
		}
	}
	return w
}

// add watches dir, at depth level, and the folders beneath it down to the
// watch's depth. A folder gone meanwhile is no error.
func (w *dirWatch) add(dir string, level int) error {
	wd, err := unix.InotifyAddWatch(int(w.f.Fd()), dir, unix.IN_CREATE|unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO|
		unix.IN_MOVED_FROM|unix.IN_DELETE|unix.IN_DELETE_SELF|unix.IN_ATTRIB|unix.IN_ONLYDIR)
	if err != nil {
		if level > 0 && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)) {
			return nil
		}
		return err
	}
	w.depth[wd], w.path[wd] = level, dir
	if level >= w.max {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			if err := w.add(filepath.Join(dir, e.Name()), level+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// until asks ok at once and again after each change in the watched
// folders since it last asked, until ok answers true; false when it has
// not within d.
func (w *dirWatch) until(ctx context.Context, d time.Duration, ok func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	deadline, _ := ctx.Deadline()
	if err := w.f.SetReadDeadline(deadline); err != nil {
		return false
	}
	buf := make([]byte, 64<<10)
	for !ok() {
		n, err := w.f.Read(buf)
		if err != nil {
			return false
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			level, watched := w.depth[int(ev.Wd)]
			if watched && ev.Mask&unix.IN_ISDIR != 0 && ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 && level < w.max {
				_ = w.add(filepath.Join(w.path[int(ev.Wd)], name), level+1)
			}
		}
	}
	return true
}

// waitExited waits up to d for the process pid to end (a zombie no one
// has reaped has ended), on a pidfd that is readable once it has; false
// when it still runs then.
func waitExited(pid int, d time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	for deadline := time.Now().Add(d); ; {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0
	}
}

// TestWaitsWakeAtTheChange: a folder watch wakes at an entry written in a
// folder made beneath it after it began, and ends false at its bound when
// nothing comes; a process's wait ends once it has, a zombie too.
func TestWaitsWakeAtTheChange(t *testing.T) {
	ctx := context.Background()
	top := t.TempDir()
	sub, file := filepath.Join(top, "sub"), filepath.Join(top, "sub", "f")
	w := watchDirs(t, 1, top)
	asked := 0
	// Each ask makes the next change: only a wake at it asks again.
	if !w.until(ctx, time.Minute, func() bool {
		asked++
		switch asked {
		case 1:
			return os.Mkdir(sub, 0o755) != nil
		case 2:
			return os.WriteFile(file, []byte("x"), 0o644) != nil
		}
		_, err := os.Stat(file)
		return err == nil
	}) {
		t.Fatalf("the watch of %s did not wake at the file written in %s (asked %d times)", top, sub, asked)
	}
	if w.until(ctx, 50*time.Millisecond, func() bool { return false }) {
		t.Fatal("a wait for what never comes answered true")
	}

	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if waitExited(cmd.Process.Pid, 50*time.Millisecond) {
		t.Fatal("a running process was waited out")
	}
	_ = cmd.Process.Kill() // a zombie until reaped below
	if !waitExited(cmd.Process.Pid, time.Minute) {
		t.Fatal("a killed process, a zombie, still runs a minute on")
	}
}

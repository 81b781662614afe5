package local

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/journal"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// logBuf keeps a backend's log lines for a test to read.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// take answers the log lines written since the last take.
func (l *logBuf) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	l.b.Reset()
	return s
}

// journalEnv is a started box with its journal, and its backend's log.
type journalEnv struct {
	env
	log *logBuf
}

func setupJournal(t *testing.T, root string, cfg Config) journalEnv {
	t.Helper()
	lb := &logBuf{}
	cfg.Root = root
	cfg.Install = "in-test"
	cfg.NoSync = true
	cfg.StopTimeout = 2 * time.Second
	cfg.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	unmountAtEnd(t, b)
	box := "bx" + store.RandomSuffix()[:12]
	g, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: "linux"}})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if err := b.Start(t.Context(), g); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	return journalEnv{env: env{b: b, g: g, dir: b.BoxDir(g), ctx: t.Context()}, log: lb}
}

// takeLogged takes a snapshot and says whether the take walked the folder,
// with the reason its log gave.
func (e journalEnv) takeLogged(t *testing.T) (providers.SnapshotRef, bool, string) {
	t.Helper()
	e.log.take()
	_, ref := e.take(t)
	why := walkedWhy(e.log.take(), "take")
	return ref, why != "", why
}

// walkedWhy finds the walk's log line of a take or a restore: "" when the
// journal was used.
func walkedWhy(logs, what string) string {
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "the "+what+" reads the box's whole folder") {
			if i := strings.Index(line, "why="); i >= 0 {
				return strings.Trim(line[i+4:], `"`)
			}
			return "(no reason given)"
		}
	}
	return ""
}

// walkTake is a full-walk take of the folder as it is now: the same
// capture a take without a journal makes, not published.
func walkTake(t *testing.T, b *Backend, dir string) *store.Manifest {
	t.Helper()
	m, _, _, err := b.Capture(t.Context(), dir, nil, nil, 0)
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	return m
}

// sameEntries compares two manifests path by path, every field but the
// access time (which reading a file changes). full also compares inodes and
// change times, for two takes of the same tree, but for the change time of a
// file in linked (given another name and then maybe that name removed, which
// inotify reports on no folder: see seeNameLocked).
func sameEntries(a, b *store.Manifest, full bool, linked ...map[uint64]bool) []string {
	idx := func(m *store.Manifest) map[string]store.Entry {
		out := map[string]store.Entry{}
		for _, e := range m.Entries {
			e.ATime = 0
			if !full {
				e.Ino, e.CTime = 0, 0
			}
			out[e.Path] = e
		}
		return out
	}
	ia, ib := idx(a), idx(b)
	var diffs []string
	for p, ea := range ia {
		eb, ok := ib[p]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: only in the first (%+v)", p, ea))
		case ea != eb:
			if len(linked) > 0 && linked[0][ea.Ino] && ea.Ino == eb.Ino {
				ea.CTime, eb.CTime = 0, 0
				if ea == eb {
					continue
				}
			}
			diffs = append(diffs, fmt.Sprintf("%s:\n   %+v\n   %+v", p, ea, eb))
		}
	}
	for p, eb := range ib {
		if _, ok := ia[p]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: only in the second (%+v)", p, eb))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// journalSeed is the test's seed: BOXSNAP_JOURNAL_SEED replays one.
func journalSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BOXSNAP_JOURNAL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("BOXSNAP_JOURNAL_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with BOXSNAP_JOURNAL_SEED=%d)", seed, seed)
	return seed
}

// churner applies random changes to a box's folder.
type churner struct {
	t       *testing.T
	rng     *rand.Rand
	dir     string
	outside string // a folder outside the box, for folders moved out and back
	n       int
	did     map[string]int
	linked  map[uint64]bool // inodes given a second name
	prefix  string          // of the names it makes
}

func newChurner(t *testing.T, seed uint64, dir string) *churner {
	return &churner{t: t, rng: rand.New(rand.NewPCG(seed, 16)), dir: dir, outside: t.TempDir(), did: map[string]int{}, linked: map[uint64]bool{}, prefix: "n"}
}

// paths lists the box's paths (never .boxsnap), folders and others apart.
func (c *churner) paths() (dirs, files []string) {
	_ = filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(c.dir, p)
		if rel == confined.MarkerDir {
			return filepath.SkipDir
		}
		if d.IsDir() {
			dirs = append(dirs, rel)
		} else {
			files = append(files, rel)
		}
		return nil
	})
	return dirs, files
}

func (c *churner) pick(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[c.rng.IntN(len(list))]
}

func (c *churner) name() string {
	c.n++
	return fmt.Sprintf("%s%d-%d", c.prefix, c.n, c.rng.IntN(1000))
}

func (c *churner) content(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(c.rng.Uint32())
	}
	return p
}

func (c *churner) abs(rel string) string { return filepath.Join(c.dir, rel) }

// step makes one random change; failures of a change the tree no longer
// allows (a name gone, a folder moved into itself) are ignored.
func (c *churner) step() {
	dirs, files := c.paths()
	d := c.pick(dirs)
	f := c.pick(files)
	// Changes to a file's content, mode or times go to regular files only:
	// never through a link, never into a fifo (which would wait for a reader).
	reg := ""
	if fi, err := os.Lstat(c.abs(f)); f != "" && err == nil && fi.Mode().IsRegular() {
		reg = f
	}
	kinds := []string{"write", "write", "overwrite", "truncate", "samesize", "renamefile", "renamedir",
		"delete", "deletedir", "mkdirs", "chmod", "chmoddir", "symlink", "relink", "hardlink",
		"linkedwrite", "fifo", "moveout", "movein", "touch", "replacedir"}
	kind := kinds[c.rng.IntN(len(kinds))]
	if (kind == "hardlink" || kind == "linkedwrite") && c.rng.IntN(4) != 0 {
		kind = "write" // rarer: each makes the next take walk (seeNameLocked)
	}
	c.did[kind]++
	switch kind {
	case "write":
		_ = os.WriteFile(c.abs(filepath.Join(d, c.name())), c.content(c.rng.IntN(3000)), 0o644)
	case "overwrite":
		if reg != "" {
			_ = os.WriteFile(c.abs(reg), c.content(c.rng.IntN(3000)), 0o644)
		}
	case "truncate":
		if f != "" {
			if fi, err := os.Lstat(c.abs(f)); err == nil && fi.Mode().IsRegular() {
				_ = os.Truncate(c.abs(f), fi.Size()/2)
			}
		}
	case "samesize":
		// New bytes, the same size and the same times: the stat cache's
		// blind spot but for the change time, and the journal's event.
		if f != "" {
			fi, err := os.Lstat(c.abs(f))
			if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
				return
			}
			var st unix.Stat_t
			_ = unix.Lstat(c.abs(f), &st)
			fh, err := os.OpenFile(c.abs(f), os.O_WRONLY, 0)
			if err != nil {
				return
			}
			_, _ = fh.WriteAt(c.content(int(fi.Size())), 0)
			fh.Close()
			_ = unix.UtimesNano(c.abs(f), []unix.Timespec{st.Atim, st.Mtim})
		}
	case "renamefile":
		if f != "" {
			to := filepath.Join(c.pick(dirs), c.name())
			if c.rng.IntN(3) == 0 {
				if g := c.pick(files); g != "" {
					to = g // over another file
				}
			}
			_ = os.Rename(c.abs(f), c.abs(to))
		}
	case "renamedir":
		if d != "." && d != "" {
			to := filepath.Join(c.pick(dirs), c.name())
			_ = os.Rename(c.abs(d), c.abs(to))
		}
	case "delete":
		if f != "" {
			_ = os.Remove(c.abs(f))
		}
	case "deletedir":
		if d != "." && d != "" {
			_ = os.RemoveAll(c.abs(d))
		}
	case "mkdirs":
		// Folders made faster than their watches are added, with files.
		p := filepath.Join(d, c.name(), c.name(), c.name())
		_ = os.MkdirAll(c.abs(p), 0o755)
		for i := 0; i < 3; i++ {
			_ = os.WriteFile(c.abs(filepath.Join(p, c.name())), c.content(100), 0o600)
		}
		_ = os.WriteFile(c.abs(filepath.Join(filepath.Dir(p), c.name())), c.content(10), 0o644)
	case "chmod":
		if reg != "" {
			_ = os.Chmod(c.abs(reg), os.FileMode(0o600+c.rng.IntN(0o177)))
		}
	case "chmoddir":
		_ = os.Chmod(c.abs(d), os.FileMode(0o700+c.rng.IntN(0o77)))
	case "symlink":
		_ = os.Symlink(c.pick([]string{"../x", "nowhere", f, "d0/e0"}), c.abs(filepath.Join(d, c.name())))
	case "relink":
		if f != "" {
			if fi, err := os.Lstat(c.abs(f)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				_ = os.Remove(c.abs(f))
				_ = os.Symlink("other-"+c.name(), c.abs(f))
			}
		}
	case "hardlink":
		if f != "" {
			var st unix.Stat_t
			if unix.Lstat(c.abs(f), &st) == nil {
				c.linked[st.Ino] = true
			}
			_ = os.Link(c.abs(f), c.abs(filepath.Join(c.pick(dirs), c.name())))
		}
	case "linkedwrite":
		// A write through one name of a hard-linked file.
		for _, g := range files {
			var st unix.Stat_t
			if unix.Lstat(c.abs(g), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
				fh, err := os.OpenFile(c.abs(g), os.O_WRONLY|os.O_APPEND, 0)
				if err == nil {
					_, _ = fh.Write(c.content(10))
					fh.Close()
				}
				return
			}
		}
	case "fifo":
		_ = unix.Mkfifo(c.abs(filepath.Join(d, c.name())), 0o644)
	case "moveout":
		if d != "." && d != "" {
			_ = os.Rename(c.abs(d), filepath.Join(c.outside, c.name()))
		}
	case "movein":
		ents, _ := os.ReadDir(c.outside)
		if len(ents) > 0 {
			// Changed while outside, then moved back in somewhere else.
			src := filepath.Join(c.outside, ents[c.rng.IntN(len(ents))].Name())
			_ = os.WriteFile(filepath.Join(src, c.name()), c.content(50), 0o644)
			_ = os.MkdirAll(filepath.Join(src, c.name(), c.name()), 0o755)
			_ = os.Rename(src, c.abs(filepath.Join(d, c.name())))
		}
	case "touch":
		if f != "" {
			ts := unix.NsecToTimespec(int64(1e9+c.rng.IntN(1e8)) * 1e9)
			_ = unix.UtimesNanoAt(unix.AT_FDCWD, c.abs(f), []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
		}
	case "replacedir":
		// A folder removed and another made under the same name.
		if d != "." && d != "" {
			_ = os.RemoveAll(c.abs(d))
			_ = os.MkdirAll(c.abs(filepath.Join(d, c.name())), 0o755)
			_ = os.WriteFile(c.abs(filepath.Join(d, c.name())), c.content(20), 0o644)
		}
	}
}

func (c *churner) seedTree() {
	for i := 0; i < 6; i++ {
		_ = os.MkdirAll(c.abs(filepath.Join(fmt.Sprintf("d%d", i), fmt.Sprintf("e%d", i%3))), 0o755)
	}
	for i := 0; i < 40; i++ {
		rel := filepath.Join(fmt.Sprintf("d%d", i%6), fmt.Sprintf("e%d", i%6%3), fmt.Sprintf("f%d", i))
		_ = os.WriteFile(c.abs(rel), c.content(c.rng.IntN(2000)), 0o644)
	}
	_ = os.Symlink("d0/e0/f0", c.abs("top-link"))
	_ = os.Link(c.abs("d1/e1/f1"), c.abs("d2/e2/hard"))
}

func TestJournalTakeEqualsWalkTake(t *testing.T) {
	seed := journalSeed(t)
	e := setupJournal(t, t.TempDir(), Config{})
	c := newChurner(t, seed, e.dir)
	c.seedTree()
	if _, walked, why := e.takeLogged(t); !walked {
		t.Fatalf("the first take after the journal started did not walk")
	} else if !strings.Contains(why, "started after the last take") {
		t.Fatalf("the first take's walk said %q", why)
	}
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	journaled := 0
	for r := 0; r < rounds; r++ {
		busy := r%3 == 2
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var stopOnce sync.Once
		halt := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
		if busy {
			// A take that fails stops the changes before the folder's
			// cleanup, so the failure is the one reported.
			t.Cleanup(halt)
			// Changes go on while the take reads: they must be in this take
			// or the next, never lost.
			wg.Add(1)
			bc := newChurner(t, seed+uint64(r)*7919, e.dir)
			bc.linked = c.linked
			bc.prefix = fmt.Sprintf("b%d-", r)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						bc.step()
					}
				}
			}()
		} else {
			for i, n := 0, 1+c.rng.IntN(25); i < n; i++ {
				c.step()
			}
		}
		ref, walked, why := e.takeLogged(t)
		if busy {
			halt()
			// The take ran among changes; the next one has the rest.
			ref, walked, why = e.takeLogged(t)
		}
		if walked && !strings.Contains(why, "hard link") && !(busy && why == journal.ChangedWhileTaking) {
			t.Fatalf("round %d: the take walked the folder: %s", r, why)
		}
		if walked {
			t.Logf("round %d walked: %s", r, why)
		} else {
			journaled++
		}
		got, err := e.b.Manifest(store.SnapID(ref))
		if err != nil {
			t.Fatal(err)
		}
		want := walkTake(t, e.b, e.dir)
		if diffs := sameEntries(got, want, true, c.linked); len(diffs) > 0 {
			t.Fatalf("round %d (seed %d): the journal-driven take differs from a walk in %d paths:\n%s",
				r, seed, len(diffs), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
		}
	}
	t.Logf("%d of %d takes journal-driven, each equal to a walk; changes made: %v", journaled, rounds, c.did)
	// Every round walks only for a reason said above (a hard link; a busy
	// round's take during changes); the rest must have used the journal.
	if journaled < rounds/10 {
		t.Fatalf("only %d of %d takes were journal-driven", journaled, rounds)
	}
}

func TestJournalFallsBackAfterOverflow(t *testing.T) {
	t.Run("the journal's cap on paths", func(t *testing.T) {
		e := setupJournal(t, t.TempDir(), Config{JournalPaths: 8})
		e.write(t, "a/one", "1")
		e.takeLogged(t)
		e.write(t, "a/two", "2")
		if _, walked, why := e.takeLogged(t); walked {
			t.Fatalf("a take after one change walked: %s", why)
		}
		for i := 0; i < 20; i++ {
			e.write(t, fmt.Sprintf("a/f%d", i), "x") // a folder already watched: one path each
		}
		if ch, err := e.b.ChangedSinceTake(e.ctx, e.g); err != nil || !ch.Changed || !ch.Walked {
			t.Fatalf("ChangedSinceTake after an overflow = %+v, %v; want changed, walked", ch, err)
		}
		ref, walked, why := e.takeLogged(t)
		if !walked || !strings.Contains(why, "more than 8 paths changed") {
			t.Fatalf("after 20 changes with a cap of 8: walked %v, why %q", walked, why)
		}
		got, _ := e.b.Manifest(store.SnapID(ref))
		if diffs := sameEntries(got, walkTake(t, e.b, e.dir), true); len(diffs) > 0 {
			t.Fatalf("the walk's take differs: %v", diffs)
		}
		e.write(t, "a/f3", "changed")
		if _, walked, why := e.takeLogged(t); walked {
			t.Fatalf("the take after the walk walked again: %s", why)
		}
	})
	t.Run("the kernel's event queue", func(t *testing.T) {
		data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
		if err != nil {
			t.Fatalf("no inotify limits to read (the journal needs inotify): %v", err)
		}
		limit, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		e := setupJournal(t, t.TempDir(), Config{JournalPaths: 1 << 20})
		e.write(t, "f", "1")
		e.takeLogged(t)
		j := e.b.JournalOf(e.g.Ref)
		// The journal cannot read while its lock is held: the kernel's queue
		// fills. Each new file is three events (create, modify, close).
		j.Mu.Lock()
		for i := 0; i < limit/3+100; i++ {
			if err := os.WriteFile(filepath.Join(e.dir, fmt.Sprintf("g%d", i)), []byte("x"), 0o644); err != nil {
				j.Mu.Unlock()
				t.Fatal(err)
			}
		}
		j.Mu.Unlock()
		ref, walked, why := e.takeLogged(t)
		if !walked || !strings.Contains(why, "the kernel's event queue overflowed") {
			t.Fatalf("after %d events with a queue of %d: walked %v, why %q", 3*(limit/3+100), limit, walked, why)
		}
		got, _ := e.b.Manifest(store.SnapID(ref))
		if diffs := sameEntries(got, walkTake(t, e.b, e.dir), true); len(diffs) > 0 {
			t.Fatalf("the walk's take differs: %v", diffs[:min(5, len(diffs))])
		}
	})
	t.Run("a stopped box and a restarted boxsnap", func(t *testing.T) {
		root := t.TempDir()
		e := setupJournal(t, root, Config{})
		e.write(t, "f", "1")
		e.takeLogged(t)
		if err := e.b.Stop(e.ctx, e.g); err != nil {
			t.Fatal(err)
		}
		e.write(t, "f", "22")
		if _, walked, why := e.takeLogged(t); !walked || !strings.Contains(why, "not running") {
			t.Fatalf("a take of a stopped box: walked %v, why %q", walked, why)
		}
		if err := e.b.Start(e.ctx, e.g); err != nil {
			t.Fatal(err)
		}
		e.takeLogged(t)
		e.write(t, "g", "1")
		if _, walked, why := e.takeLogged(t); walked {
			t.Fatalf("walked after a restart of the box: %s", why)
		}
		// boxsnap restarts: a new backend on the same store.
		_ = e.b.Close(e.ctx)
		e2 := setupJournal(t, root, Config{})
		e2.g, e2.dir = e.g, e.dir
		if err := e2.b.Start(e2.ctx, e2.g); err != nil {
			t.Fatal(err)
		}
		e2.write(t, "f", "333")
		if _, walked, why := e2.takeLogged(t); !walked || !strings.Contains(why, "started after the last take") {
			t.Fatalf("the first take after a restart: walked %v, why %q", walked, why)
		}
	})
}

func TestChangedSinceTakeReadsNoFolder(t *testing.T) {
	e := setupJournal(t, t.TempDir(), Config{})
	e.write(t, "a/b/c", "1")
	e.takeLogged(t)
	ch, err := e.b.ChangedSinceTake(e.ctx, e.g)
	if err != nil || ch.Changed || ch.Walked {
		t.Fatalf("right after a take: %+v, %v; want unchanged, from the journal", ch, err)
	}
	// New bytes, same size and mtime.
	var st unix.Stat_t
	_ = unix.Lstat(filepath.Join(e.dir, "a/b/c"), &st)
	e.write(t, "a/b/c", "2")
	_ = unix.UtimesNano(filepath.Join(e.dir, "a/b/c"), []unix.Timespec{st.Atim, st.Mtim})
	ch, err = e.b.ChangedSinceTake(e.ctx, e.g)
	if err != nil || !ch.Changed || ch.Walked || ch.Paths != 1 {
		t.Fatalf("after a write keeping size and mtime: %+v, %v; want changed, 1 path, from the journal", ch, err)
	}
	e.takeLogged(t)
	if ch, _ := e.b.ChangedSinceTake(e.ctx, e.g); ch.Changed {
		t.Fatalf("after the take: %+v", ch)
	}
	if err := e.b.Stop(e.ctx, e.g); err != nil {
		t.Fatal(err)
	}
	ch, err = e.b.ChangedSinceTake(e.ctx, e.g)
	if err != nil || ch.Changed || !ch.Walked {
		t.Fatalf("a stopped box, unchanged: %+v, %v; want unchanged, walked", ch, err)
	}
}

func TestJournalRestoreEqualsWalkRestore(t *testing.T) {
	seed := journalSeed(t)
	// Two boxes get the same changes: one restores with its journal, the
	// other, on a backend without, walks.
	ej := setupJournal(t, t.TempDir(), Config{})
	ew := setupJournal(t, t.TempDir(), Config{NoJournal: true})
	cj := newChurner(t, seed, ej.dir)
	cw := newChurner(t, seed, ew.dir)
	counts := rand.New(rand.NewPCG(seed, 17))
	both := func(n int) {
		for i := 0; i < n; i++ {
			cj.step()
			cw.step()
		}
	}
	cj.seedTree()
	cw.seedTree()
	ej.takeLogged(t)
	ew.takeLogged(t)
	for r := 0; r < 8; r++ {
		both(1 + counts.IntN(15))
		refJ, walked, why := ej.takeLogged(t)
		if walked && !strings.Contains(why, "hard link") {
			t.Fatalf("round %d: take walked: %s", r, why)
		}
		refW, _, _ := ew.takeLogged(t)
		both(1 + counts.IntN(15))
		ej.takeLogged(t) // as the core's undo take
		ew.takeLogged(t)
		both(counts.IntN(10)) // changes no take saw
		for _, x := range []struct {
			e   journalEnv
			ref providers.SnapshotRef
		}{{ej, refJ}, {ew, refW}} {
			x.e.log.take()
			if _, err := x.e.b.RestoreSnapshot(x.e.ctx, x.e.g, x.ref, providers.StepRollback, nil); err != nil {
				t.Fatalf("round %d: restore: %v", r, err)
			}
			walked := walkedWhy(x.e.log.take(), "restore")
			if strings.Contains(walked, "hard link") {
				t.Logf("round %d: the restore walked: %s", r, walked)
			} else if (walked == "") != (x.e.b == ej.b) {
				t.Fatalf("round %d: the restore walked: %q (journal backend: %v)", r, walked, x.e.b == ej.b)
			}
			target, _ := x.e.b.Manifest(store.SnapID(x.ref))
			if diffs := sameEntries(target, walkTake(t, x.e.b, x.e.dir), false); len(diffs) > 0 {
				t.Fatalf("round %d (seed %d): after the restore the folder differs from the snapshot in %d paths:\n%s",
					r, seed, len(diffs), strings.Join(diffs[:min(len(diffs), 10)], "\n"))
			}
		}
		// The two folders are the same, file for file.
		mj, mw := walkTake(t, ej.b, ej.dir), walkTake(t, ew.b, ew.dir)
		for _, m := range []*store.Manifest{mj, mw} {
			kept := m.Entries[:0]
			for _, e := range m.Entries {
				if e.Path == confined.MarkerDir || strings.HasPrefix(e.Path, confined.MarkerDir+"/") {
					continue // each box's own identity
				}
				e.MTime, e.UID, e.GID = 0, 0, 0
				kept = append(kept, e)
			}
			m.Entries = kept
		}
		if diffs := sameEntries(mj, mw, false); len(diffs) > 0 {
			t.Fatalf("round %d (seed %d): the journal-driven restore and the walk-driven one differ:\n%s",
				r, seed, strings.Join(diffs[:min(len(diffs), 10)], "\n"))
		}
		// And the next journal-driven take after the restore equals a walk.
		ref, walked, why := ej.takeLogged(t)
		if walked && !strings.Contains(why, "hard link") {
			t.Fatalf("round %d: the take after a restore walked: %s", r, why)
		}
		got, _ := ej.b.Manifest(store.SnapID(ref))
		if diffs := sameEntries(got, walkTake(t, ej.b, ej.dir), true, cj.linked); len(diffs) > 0 {
			t.Fatalf("round %d (seed %d): the take after the restore differs from a walk:\n%s",
				r, seed, strings.Join(diffs[:min(len(diffs), 10)], "\n"))
		}
		ew.takeLogged(t)
	}
}

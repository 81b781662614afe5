package confined

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sort"
	"sync"

	"github.com/boxsnap/boxsnap/providers/local/store"
	"golang.org/x/sys/unix"
)

// Scanner reads a box's folder, beneath it, with several workers.
type Scanner struct {
	workers int
}

// NewScanner is a Scanner that reads with workers folders at once.
func NewScanner(workers int) *Scanner { return &Scanner{workers: workers} }

// Scanned is one path of a folder, as a scan found it.
type Scanned struct {
	Rel string // slash-separated; "." for the top
	St  unix.Stat_t
	// Prev is the path's entry in the manifest a journal-driven read starts
	// from; nil from a walk.
	Prev *store.Entry
}

// Mode gives the path's fs.FileMode from its stat.
func (s *Scanned) Mode() fs.FileMode { return store.ModeOfStat(s.St.Mode) }

// ScanTree stats every path under dir, never following a link, with the
// backend's workers reading folders side by side. Each folder is opened
// beneath dir with no link followed in any component (go), and
// each stat is relative to its folder's descriptor (fstatat): a folder the
// box swaps for a link while the scan reads is left out, never listed. Paths that vanish while it reads are left out. The answer is sorted
// by path, which puts every folder before what it holds.
func (b *Scanner) ScanTree(ctx context.Context, dir string) ([]Scanned, error) {
	return b.ScanFrom(ctx, dir, ".")
}

// ScanFrom is scanTree of the folder rel under dir and what it holds, with
// paths relative to dir.
func (b *Scanner) ScanFrom(ctx context.Context, dir, rel string) ([]Scanned, error) {
	root, err := OpenTree(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var top unix.Stat_t
	if err := root.Lstat(rel, &top); err != nil {
		if rel != "." && GoneOrSwapped(err) {
			return nil, nil
		}
		return nil, err
	}
	out := []Scanned{{Rel: rel, St: top}}
	if top.Mode&unix.S_IFMT != unix.S_IFDIR {
		return out, nil
	}
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		first   error
		pending = []string{rel}
		cond    = sync.NewCond(&mu)
		busy    int
	)
	worker := func() {
		defer wg.Done()
		for {
			mu.Lock()
			for len(pending) == 0 && busy > 0 && first == nil {
				cond.Wait()
			}
			if len(pending) == 0 || first != nil {
				mu.Unlock()
				cond.Broadcast()
				return
			}
			rel := pending[len(pending)-1]
			pending = pending[:len(pending)-1]
			busy++
			mu.Unlock()

			found, subdirs, err := scanDir(root, rel)
			if err == nil {
				err = ctx.Err()
			}
			mu.Lock()
			busy--
			if err != nil && first == nil {
				first = err
			}
			out = append(out, found...)
			pending = append(pending, subdirs...)
			mu.Unlock()
			cond.Broadcast()
		}
	}
	for w := 0; w < b.workers; w++ {
		wg.Add(1)
		go worker()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out, nil
}

// scanDir reads one folder: its entries' stats and its subfolders.
func scanDir(root *Beneath, rel string) ([]Scanned, []string, error) {
	path := root.Dir
	if rel != "." {
		path = root.Dir + "/" + rel
	}
	fd, err := root.Open(rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		if GoneOrSwapped(err) {
			return nil, nil, nil // it vanished, or became something else
		}
		return nil, nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	names, err := ReadNames(f)
	if err != nil {
		return nil, nil, err
	}
	found := make([]Scanned, 0, len(names))
	var subdirs []string
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return nil, nil, &fs.PathError{Op: "fstatat", Path: path + "/" + name, Err: err}
		}
		r := name
		if rel != "." {
			r = rel + "/" + name
		}
		found = append(found, Scanned{Rel: r, St: st})
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			subdirs = append(subdirs, r)
		}
	}
	return found, subdirs, nil
}

// ReadNames reads an open folder's names. A folder removed after it was
// opened (the box's own work going on while a take reads it) reads as
// empty, as one removed before it was opened does: getdents answers ENOENT
// for a folder with no links left.
func ReadNames(f *os.File) ([]string, error) {
	names, err := f.Readdirnames(-1)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, nil
		}
		return nil, &fs.PathError{Op: "readdir", Path: f.Name(), Err: err}
	}
	return names, nil
}

package apply

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"sync"

	"github.com/boxsnap/boxsnap/providers/local/confined"
	"github.com/boxsnap/boxsnap/providers/local/journal"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// folderRun is some of the entries of one folder, in the manifest's
// order: the folder is opened once beneath the box's for them all.
type folderRun struct {
	dir  string // "." for the box's own folder
	ents []*store.Entry
}

// runMax bounds how many entries one worker changes in one folder at a
// time, so the workers share a large folder.
const runMax = 256

// folderLevels cuts ents into runs of at most runMax entries of one
// folder each, and the runs into levels by the depth of their folder,
// shallowest first: every folder of a level's runs lies in a folder of an
// earlier level, never in one of its own.
func folderLevels(ents []*store.Entry) [][]folderRun {
	byDepth := make(map[int][]folderRun)
	last := make(map[string]int) // a folder's open run, by its index in byDepth
	for _, e := range ents {
		dir := journal.FolderOf(e.Path)
		d := store.Depth(dir)
		runs := byDepth[d]
		if i, ok := last[dir]; ok && len(runs[i].ents) < runMax {
			runs[i].ents = append(runs[i].ents, e)
			continue
		}
		last[dir] = len(runs)
		byDepth[d] = append(runs, folderRun{dir: dir, ents: []*store.Entry{e}})
	}
	depths := make([]int, 0, len(byDepth))
	for d := range byDepth {
		depths = append(depths, d)
	}
	sort.Ints(depths)
	levels := make([][]folderRun, 0, len(depths))
	for _, d := range depths {
		levels = append(levels, byDepth[d])
	}
	return levels
}

// inFolders runs fn on each entry of levels, with the name of the entry in
// its folder, opened once a run beneath t (so no link is followed on its
// way, as every change of a box's path): the runs of one level on the
// writer's workers at once, the levels one after another, shallowest
// first or, with deepestFirst, deepest first. The first error stops it.
func (b *Writer) inFolders(ctx context.Context, t *confined.Beneath, levels [][]folderRun, deepestFirst bool, fn func(folder *confined.Beneath, name string, e *store.Entry) error) error {
	for l := range levels {
		if deepestFirst {
			l = len(levels) - 1 - l
		}
		runs := levels[l]
		err := b.Parallel(ctx, len(runs), func(i int) error {
			r := runs[i]
			folder := t
			if r.dir != "." {
				var err error
				if folder, err = t.Sub(r.dir); err != nil {
					return err
				}
				defer folder.Close()
			}
			for _, e := range r.ents {
				if err := fn(folder, path.Base(e.Path), e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// makeNonFiles makes the folders, links and fifos of ents the folder
// lacks, a folder's before what it holds, on the writer's workers a
// folder at a time; puts back the details of links and fifos, and marks
// touched each folder it made something in. It gives how many links it
// wrote.
func (b *Writer) makeNonFiles(ctx context.Context, t *confined.Beneath, ents []store.Entry, cur map[string]current, touched map[string]bool, root bool) (int, error) {
	var todo []*store.Entry
	for i := range ents {
		switch e := &ents[i]; e.Type {
		case store.TypeDir:
			if _, ok := cur[e.Path]; !ok {
				todo = append(todo, e)
			}
		case store.TypeLink, store.TypeFIFO:
			todo = append(todo, e)
		}
	}
	var (
		mu      sync.Mutex
		written int
	)
	err := b.inFolders(ctx, t, folderLevels(todo), false, func(folder *confined.Beneath, name string, e *store.Entry) error {
		made, link, err := makeNonFile(folder, name, e, cur, root)
		if made {
			mu.Lock()
			touched[journal.FolderOf(e.Path)] = true
			if link {
				written++
			}
			mu.Unlock()
		}
		return err
	})
	return written, err
}

// makeNonFile makes e, a folder the box's folder lacks, a link or a fifo,
// as name in folder, and puts back a link's or a fifo's details. It says
// whether it made something (a link, with link) in folder.
func makeNonFile(folder *confined.Beneath, name string, e *store.Entry, cur map[string]current, root bool) (made, link bool, err error) {
	switch e.Type {
	case store.TypeDir:
		if err := folder.Mkdir(name, 0o700); err != nil {
			return false, false, fmt.Errorf("make folder %s: %w", e.Path, err)
		}
		return true, false, nil
	case store.TypeLink:
		if _, ok := cur[e.Path]; ok {
			if target, err := folder.Readlink(name); err == nil && target == e.Target {
				return false, false, setMetaAt(folder, name, e, root)
			}
			if err := folder.Remove(name); err != nil {
				return false, false, fmt.Errorf("remove link %s: %w", e.Path, err)
			}
		}
		if err := folder.Symlink(e.Target, name); err != nil {
			return false, false, fmt.Errorf("make link %s: %w", e.Path, err)
		}
		return true, true, setMetaAt(folder, name, e, root)
	case store.TypeFIFO:
		if _, ok := cur[e.Path]; !ok {
			if err := folder.Mkfifo(name, fs.FileMode(e.Mode&0o777)); err != nil {
				return false, false, fmt.Errorf("make fifo %s: %w", e.Path, err)
			}
			made = true
		}
		return made, false, setMetaAt(folder, name, e, root)
	}
	return false, false, nil
}

// putFolderDetails puts back the folders' details, last, on the writer's
// workers a folder's subfolders at a time, deepest first (a folder's
// mode may bar a user who is not root from those beneath it); a folder as
// the snapshot has it, with nothing written in it, is left alone. Setting
// a folder's details changes none of its folder's times.
func (b *Writer) putFolderDetails(ctx context.Context, t *confined.Beneath, ents []store.Entry, cur map[string]current, touched map[string]bool, root bool) error {
	asItIs := func(e *store.Entry) bool {
		c, ok := cur[e.Path]
		return ok && !touched[e.Path] && typeOfMode(c.mode) == store.TypeDir &&
			store.FileModeOf(c.st.Mode) == e.FileMode() && c.st.Mtim.Nano() == e.MTime &&
			(!root || (c.st.Uid == e.UID && c.st.Gid == e.GID))
	}
	var dirs []*store.Entry
	var top *store.Entry // the box's own folder, last of all
	for i := range ents {
		switch e := &ents[i]; {
		case e.Type != store.TypeDir || asItIs(e):
		case e.Path == ".":
			top = e
		default:
			dirs = append(dirs, e)
		}
	}
	err := b.inFolders(ctx, t, folderLevels(dirs), true, func(folder *confined.Beneath, name string, e *store.Entry) error {
		return setMetaAt(folder, name, e, root)
	})
	if err != nil || top == nil {
		return err
	}
	return setMeta(t, top, root)
}

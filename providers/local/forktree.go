package local

import (
	"context"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/overlay"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// writeTree writes m's files into dir, the shared tree forks of m lie
// over: each file an object of the store's content can stand for is a
// hard link to it (overlay.Links), the rest copied as a restore writes
// them. If some could not be linked after all, a second pass writes them
// as a restore does, checking what was linked against its hash. With a
// content store, what this host lacks of m is fetched into its content
// first, so each object fetched is written once and the tree links it.
func writeTree(ctx context.Context, b *Backend, dir string, m *store.Manifest) error {
	if err := b.FetchAll(ctx, m); err != nil {
		return err
	}
	start := time.Now()
	links := &overlay.Links{Store: b.Store, Hash: b.HashFile, Parallel: b.Parallel, Checked: b.Checked, NoteChecked: b.NoteChecked}
	link, rest := links.Split(dir, m)
	if len(link) > 0 {
		part := *m
		part.Entries = rest
		if _, err := b.Apply(ctx, dir, &part, nil, nil); err != nil {
			return err
		}
		made := time.Now()
		failed, err := links.Link(ctx, dir, link, m)
		b.log.Debug("local backend: wrote a shared tree", "snapshot", m.ID, "entries", len(m.Entries), "links", len(link),
			"rest", made.Sub(start), "link", time.Since(made))
		if err != nil || failed == 0 {
			return err
		}
		b.log.Info("local backend: some files of a shared tree could not be links to the store's content, so they are copied", "snapshot", m.ID, "files", failed)
	}
	_, err := b.Apply(ctx, dir, m, nil, nil)
	return err
}

package confined

import (
	"context"

	"github.com/boxsnap/boxsnap/providers/local/store"
	"golang.org/x/sys/unix"
)

// DiskUse is what the box's folder holds on disk: each file's allocated
// blocks (a sparse file's holes cost nothing), at most its size.
func (b *Scanner) DiskUse(ctx context.Context, dir string) (int64, error) {
	found, err := b.ScanTree(ctx, dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for i := range found {
		if found[i].St.Mode&unix.S_IFMT == unix.S_IFREG {
			total += AllocatedOf(&found[i].St)
		}
	}
	return total, nil
}

// TreeSize adds up the sizes of the regular files under dir.
func (b *Scanner) TreeSize(ctx context.Context, dir string) (int64, error) {
	found, err := b.ScanTree(ctx, dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for i := range found {
		if found[i].St.Mode&unix.S_IFMT == unix.S_IFREG {
			total += found[i].St.Size
		}
	}
	return total, nil
}

// ScanChanges stats the box's files against the previous manifest: how many
// paths, their total size, and what those whose stat changed hold on disk
// (the content a take would read and may add).
func (b *Scanner) ScanChanges(ctx context.Context, dir string, prev map[string]*store.Entry) (files int, total, changed int64, err error) {
	found, err := b.ScanTree(ctx, dir)
	if err != nil {
		return 0, 0, 0, err
	}
	for i := range found {
		s := &found[i]
		files++
		if s.St.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		total += s.St.Size
		if pe := prev[s.Rel]; pe == nil || pe.Key() != store.KeyOf(&s.St) {
			changed += AllocatedOf(&s.St) // a sparse file's copy holds its data only
		}
	}
	return files, total, changed, nil
}

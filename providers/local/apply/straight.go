package apply

import (
	"bytes"
	"context"
	"fmt"
	"path"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/confined"
)

// accessText is the box's access file as boxsnap writes it on every
// backend (providers.AccessText).
func accessText(a providers.Access) []byte { return providers.AccessText(a) }

// SetStraight writes the box's access file, .boxsnap/env, as the box holds it
// now: a restore put back the one of the snapshot's time. It answers what it
// changed. Everything is written beneath the box's folder through no link
// (package confined): a .boxsnap the box made a link (or a file) is replaced by a
// real folder, never followed, and the access file is given to the box's user
// on its open descriptor.
func (b *Writer) SetStraight(_ context.Context, g providers.Guest, a providers.Access) ([]string, error) {
	dir, err := b.ExistingBox(g)
	if err != nil {
		return nil, err
	}
	root, err := confined.OpenTree(dir)
	if err != nil {
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	defer root.Close()
	want := accessText(a)
	name := path.Base(confined.AccessFile)
	if mfd, err := root.Open(confined.MarkerDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW); err == nil {
		have, err := confined.ReadAt(mfd, name, len(want))
		unix.Close(mfd)
		if err == nil && bytes.Equal(have, want) {
			return nil, nil
		}
	}
	mfd, err := root.MarkerFolder()
	if err != nil {
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	defer unix.Close(mfd)
	// The access file is the box's, for its user to read: it goes to
	// whoever owns the box's folder (its process's user once it has run).
	uid, gid := -1, -1
	var st unix.Stat_t
	if err := unix.Fstat(root.Fd, &st); err == nil {
		uid, gid = int(st.Uid), int(st.Gid)
	}
	if err := confined.WriteAt(mfd, name, want, 0o600, uid, gid); err != nil {
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	if uid >= 0 {
		if err := unix.Fchown(mfd, uid, gid); err != nil {
			return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
		}
	}
	return []string{providers.AccessFileWords}, nil
}

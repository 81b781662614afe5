package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/boxsnap/boxsnap/providers"
)

// accessText is the box's access file as boxsnap writes it: who the box is
// and who may reach it now, one KEY=value a line.
func accessText(a providers.Access) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "BOXSNAP_INSTALL=%s\n", a.Box.Install)
	fmt.Fprintf(&b, "BOXSNAP_BOX=%s\n", a.Box.ID)
	fmt.Fprintf(&b, "BOXSNAP_BOX_NAME=%s\n", a.Box.Name)
	fmt.Fprintf(&b, "BOXSNAP_THREAD=%s\n", a.Thread)
	fmt.Fprintf(&b, "BOXSNAP_THREADS=%s\n", strings.Join(a.Threads, ","))
	fmt.Fprintf(&b, "BOXSNAP_GENERATION=%s\n", strconv.Itoa(a.Generation))
	return b.Bytes()
}

// SetStraight writes the box's access file, .boxsnap/env, as the box holds
// it now (section 5, step 9): a restore put back the one of the snapshot's
// time. It answers what it changed.
func (b *Backend) SetStraight(_ context.Context, g providers.Guest, a providers.Access) ([]string, error) {
	dir, err := b.existingBox(g)
	if err != nil {
		return nil, err
	}
	want := accessText(a)
	path := filepath.Join(dir, accessFile)
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, want) {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Join(dir, markerDir), 0o700); err != nil {
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	if err := replaceFile(path, want, 0o600); err != nil {
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	// The access file is the box's, for its user to read: it goes to
	// whoever owns the box's folder (its process's user once it has run).
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err == nil {
		for _, p := range []string{filepath.Join(dir, markerDir), path} {
			if err := os.Lchown(p, int(st.Uid), int(st.Gid)); err != nil {
				return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
			}
		}
	}
	return []string{"its access file"}, nil
}

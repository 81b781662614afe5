package qemu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// A box's access (who the box is and who may reach it now) reaches its
// guest on a small disk of its own: a raw file in the backend's folder,
// attached read-only as the guest's second virtio disk (vdb) and never in a
// snapshot (read-only, and snapshot='no': qcow2 internal snapshots and
// QEMU's savevm leave it out). So no restore ever puts an older access back:
// whatever the guest reads from that disk is what boxsnap wrote last. A
// restore writes it first: the plan puts the core's access step before the
// memory revert (the guest resumes with its processes and today's access
// already there) and before the start after a disk revert (the guest boots
// with it). The guest reads it uncached (dd iflag=direct): a guest brought
// back from memory holds the snapshot's access in its page cache.
//
// Why a disk and not fw_cfg or a channel: fw_cfg is read when QEMU starts,
// so a revert within a running QEMU would keep the old one; a virtio-serial
// channel or the guest agent would push it only after the guest runs again,
// racing its processes. A disk the guest reads is there before it runs.

var _ providers.Straightener = (*Backend)(nil)

// accessDiskBytes is the access disk's size: the access as KEY=value
// lines, padded with NULs.
const accessDiskBytes = 64 << 10

// accessPath is the guest's access disk.
func (b *Backend) accessPath(name string) string { return filepath.Join(b.cfg.Dir, name+".access") }

// accessText is the box's access as the guest reads it: who the box is and
// who may reach it now, one KEY=value a line (the local backend's
// .boxsnap/env, the same keys).
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

// writeAccess writes text on the access disk at p, in place (QEMU holds
// the file open: a new file would never reach the guest), and says whether
// it changed anything.
func writeAccess(p string, text []byte) (bool, error) {
	if len(text) > accessDiskBytes {
		return false, fmt.Errorf("the access is %d bytes, more than its disk's %d", len(text), accessDiskBytes)
	}
	want := make([]byte, accessDiskBytes)
	copy(want, text)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("open the access disk: %w", err)
	}
	defer f.Close()
	have := make([]byte, accessDiskBytes)
	if _, err := io.ReadFull(f, have); err == nil && bytes.Equal(have, want) {
		return false, nil
	} else if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, fmt.Errorf("read the access disk: %w", err)
	}
	if _, err := f.WriteAt(want, 0); err != nil {
		return false, fmt.Errorf("write the access disk: %w", err)
	}
	if err := f.Truncate(accessDiskBytes); err != nil {
		return false, fmt.Errorf("write the access disk: %w", err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("write the access disk: %w", err)
	}
	return true, nil
}

// SetStraight writes the box's access on its access disk as the box holds
// it now, and answers what it changed.
func (b *Backend) SetStraight(ctx context.Context, g providers.Guest, a providers.Access) ([]string, error) {
	if _, _, err := b.domain(ctx, g); err != nil {
		return nil, err
	}
	changed, err := writeAccess(b.accessPath(g.Ref), accessText(a))
	if err != nil {
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	if !changed {
		return nil, nil
	}
	return []string{"its access disk"}, nil
}

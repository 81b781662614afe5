package diskimage

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A box's image is sparse and of its bound's size, and yet a host whose own
// disk fills never fails a write into it: every block of the image that its
// file system may write is allocated on the host beforehand, except those
// of one file in its root, the held room (fileRoom), which the file system
// never writes while the file holds them (its blocks are allocated as
// unwritten, and read as zeros without a write). The box's folder is the
// image's subfolder box, bound on the box's folder, so the box never sees
// that file. As the box fills, a watch gives it room ahead: a part of the
// held room allocated on the host first (fallocate), then taken from the
// file (truncated), so its blocks become free in the box's file system
// already backed by the host. When the host is full the allocation is
// refused and the file keeps them: the box's own file system is full, its
// writes fail (no space left on device) and nothing is lost, and once room
// is made on the host the watch gives it room again. Growing the file
// system itself (resize2fs online) would need CAP_SYS_RESOURCE, which a
// container's root often lacks; this needs only fallocate.

// labelRoom is the ext4 label of an image made with held room: its box is
// its subfolder box. An image made before has no label, and its root is
// the box. The box cannot change a label (that needs CAP_SYS_ADMIN).
const labelRoom = "boxsnap-room"

// fileRoom is the held room's file in an image's root; dirBoxInImage is the
// subfolder that is the box's folder. fileRoomMaking is the held room while
// holdRoom makes it, renamed to fileRoom once the image is set up: the
// growth watch never reads an image half made, whose room falls fast as it
// is held, as a box writing gigabytes a second.
const (
	fileRoom       = "room"
	fileRoomMaking = "room.making"
	dirBoxInImage  = "box"
)

// roomAhead is the free room kept allocated on the host ahead of a box's
// writes at rest. A box writing flat out into the page cache here writes
// 0.65 to 2.3 GB/s: from rest, past about 2 GB/s, it can meet a full file
// system before the watch's next turn (4 runs of 20 of TestBoxImageGrows,
// once each, at its first 64 MiB); once it writes, the watch gives it a
// second of its writes ahead (Grower.run).
const roomAhead = 64 << 20

// hostReserve is the free room on the host the growth watch never gives a
// box: boxsnap's own files (a box's state, its log, a take's records)
// still have it when the boxes' disks have grown as far as the host lets
// them.
const hostReserve = 16 << 20

// growEvery is how often the watch reads every mounted image's room.
const growEvery = 25 * time.Millisecond

// FSDirOf is where the image img is mounted, beside it: the folder whose
// subfolder box is bound on the box's folder.
func FSDirOf(img string) string { return strings.TrimSuffix(img, ".img") + ".fs" }

// hasHeldRoom says whether img was made with held room (its label says so).
func hasHeldRoom(img string) bool {
	f, err := os.Open(img)
	if err != nil {
		return false
	}
	defer f.Close()
	// The ext4 superblock starts at 1024 bytes; its volume name at 0x78.
	var name [16]byte
	if _, err := f.ReadAt(name[:], 1024+0x78); err != nil {
		return false
	}
	return strings.TrimRight(string(name[:]), "\x00") == labelRoom
}

// NoRoomError is a host without room for what a fresh image takes at once:
// Need bytes.
type NoRoomError struct{ Need int64 }

func (e *NoRoomError) Error() string {
	return fmt.Sprintf("the host has no room for the %d bytes the disk image takes at once", e.Need)
}

// holdRoom sets up a fresh image img, mounted on fsd: its held room takes
// all that is free in its file system but roomAhead, and every other block
// of the image is allocated on the host. A host without that room answers
// a *NoRoomError.
func holdRoom(fsd, img string) error {
	var s unix.Statfs_t
	if err := unix.Statfs(fsd, &s); err != nil {
		return fmt.Errorf("read the image's room: %w", err)
	}
	free := int64(s.Bavail) * int64(s.Bsize)
	// What is held leaves the file's own extent blocks free too (a block
	// for about 340 extents of up to 128 MiB).
	held := (free - roomAhead - 1<<20 - free/4096) &^ (1<<20 - 1)
	var extents [][2]int64
	if held > 0 {
		f, err := os.OpenFile(filepath.Join(fsd, fileRoomMaking), os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return fmt.Errorf("make the image's held room: %w", err)
		}
		defer f.Close()
		if err := unix.Fallocate(int(f.Fd()), 0, 0, held); err != nil {
			return fmt.Errorf("make the image's held room: %w", err)
		}
		if extents, err = physical(f, 0, held); err != nil {
			return fmt.Errorf("map the image's held room: %w", err)
		}
	}
	imgf, err := os.OpenFile(img, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the image: %w", err)
	}
	defer imgf.Close()
	fi, err := imgf.Stat()
	if err != nil {
		return fmt.Errorf("open the image: %w", err)
	}
	// The rest, in the gaps between the held extents (sorted by physical
	// place), is allocated on the host.
	var gaps [][2]int64
	var need int64
	at := int64(0)
	for _, e := range append(sortedByPlace(extents), [2]int64{fi.Size(), 0}) {
		if e[0] > at {
			gaps = append(gaps, [2]int64{at, e[0] - at})
			need += e[0] - at
		}
		at = max(at, e[0]+e[1])
	}
	for _, g := range gaps {
		err := unix.Fallocate(int(imgf.Fd()), unix.FALLOC_FL_KEEP_SIZE, g[0], g[1])
		if errors.Is(err, unix.ENOSPC) {
			return &NoRoomError{Need: need}
		}
		if err != nil {
			return fmt.Errorf("allocate the box's image on the host: %w", err)
		}
	}
	if held > 0 {
		if err := os.Rename(filepath.Join(fsd, fileRoomMaking), filepath.Join(fsd, fileRoom)); err != nil {
			return fmt.Errorf("make the image's held room: %w", err)
		}
	}
	return nil
}

// sortedByPlace sorts extents ([physical, length]) by physical place.
func sortedByPlace(ex [][2]int64) [][2]int64 {
	out := append([][2]int64(nil), ex...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j][0] < out[j-1][0]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// giveRoom gives the box whose image img is mounted on fsd up to n bytes of
// its held room: allocated on the host first, then taken from the held
// room's file, under the file's flock so two boxsnap processes never give
// the same bytes. It answers what it gave; an error wrapping ENOSPC says
// the host has no room for it (nothing was given).
func giveRoom(fsd, img string, n int64) (int64, error) {
	f, err := os.OpenFile(filepath.Join(fsd, fileRoom), os.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil // nothing held: the box is at its bound
	}
	if err != nil {
		return 0, fmt.Errorf("open the held room: %w", err)
	}
	defer f.Close()
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return 0, fmt.Errorf("lock the held room: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, fmt.Errorf("read the held room: %w", err)
	}
	if st.Nlink == 0 {
		return 0, nil // all given while this waited for the lock
	}
	if st.Blocks == 0 && st.Size > 0 {
		// A last give cut short between its commit and the file's
		// removal (release) left the file holding nothing.
		if err := os.Remove(f.Name()); err != nil {
			return 0, fmt.Errorf("give the held room: %w", err)
		}
		return 0, nil
	}
	size := st.Size
	n = min((n+1<<20-1)&^(1<<20-1), size)
	if n <= 0 {
		return 0, nil
	}
	extents, err := physical(f, size-n, n)
	if err != nil {
		return 0, fmt.Errorf("map the held room: %w", err)
	}
	imgf, err := os.OpenFile(img, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("open the image: %w", err)
	}
	defer imgf.Close()
	for _, e := range extents {
		if err := unix.Fallocate(int(imgf.Fd()), unix.FALLOC_FL_KEEP_SIZE, e[0], e[1]); err != nil {
			return 0, fmt.Errorf("allocate the box's room on the host: %w", err)
		}
	}
	// The host's allocation is on its disk before the held room gives the
	// blocks up: a host crash in between leaves them held, never free in
	// the box with nothing behind them on the host.
	if err := imgf.Sync(); err != nil {
		return 0, fmt.Errorf("allocate the box's room on the host: %w", err)
	}
	if err := release(f, size, n); err != nil {
		return 0, fmt.Errorf("give the held room: %w", err)
	}
	return n, nil
}

// release takes the last n of the size bytes of the held room's file f
// from it, removing the file when none is left. The last of the room is
// freed (punched) and its free committed (fsync) before the file goes, so
// Held reads none only once every block given is writable by a box writing
// flat out, with no later give to wait for: removed first, the file's
// blocks were freed only at its close, and ext4 reuses a freed block only
// once its journal has committed the free. Only the last give pays that
// commit (an fsync per give cost up to 2.3 s while a box wrote flat out).
func release(f *os.File, size, n int64) error {
	if size-n > 0 {
		return f.Truncate(size - n)
	}
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, size); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return os.Remove(f.Name())
}

// Held is what the held room of the image mounted on fsd holds: 0 when
// it has none (the box is at its bound, or its image was made before).
func Held(fsd string) int64 {
	fi, err := os.Lstat(filepath.Join(fsd, fileRoom))
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return fi.Size()
}

// MakeRoomIn gives the box whose folder is dir room ahead for n bytes more
// than it holds now, before a write of that many (a restore, a fork, a
// template's files), so a write faster than the watch does not meet a full
// file system. A box without held room is left as is.
func MakeRoomIn(dir string, n int64) error {
	fsd := MountOf(dir)
	if fsd == "" || Held(fsd) == 0 {
		return nil
	}
	img := strings.TrimSuffix(fsd, ".fs") + ".img"
	var s unix.Statfs_t
	if err := unix.Statfs(fsd, &s); err != nil {
		return fmt.Errorf("read the box's room: %w", err)
	}
	if need := n + roomAhead - int64(s.Bavail)*int64(s.Bsize); need > 0 {
		if _, err := giveRoom(fsd, img, need); err != nil {
			return fmt.Errorf("the box's room: %w", err)
		}
	}
	return nil
}

// The FIEMAP ioctl's structures (linux/fiemap.h).
const (
	fsIocFiemap       = 0xC020660B
	fiemapExtentLast  = 0x1
	fiemapExtentCount = 256
)

type fiemapHead struct {
	start, length           uint64
	flags, mapped, count, _ uint32
}

type fiemapExtent struct {
	logical, physical, length uint64
	_                         [2]uint64
	flags                     uint32
	_                         [3]uint32
}

// physical answers where the bytes [off, off+n) of f lie on its file
// system's device, as [place, length] pairs.
func physical(f *os.File, off, n int64) ([][2]int64, error) {
	var out [][2]int64
	end := off + n
	for at := off; at < end; {
		buf := make([]byte, unsafe.Sizeof(fiemapHead{})+fiemapExtentCount*unsafe.Sizeof(fiemapExtent{}))
		h := (*fiemapHead)(unsafe.Pointer(&buf[0]))
		h.start, h.length, h.count = uint64(at), uint64(end-at), fiemapExtentCount
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0]))); errno != 0 {
			return nil, errno
		}
		if h.mapped == 0 {
			return nil, fmt.Errorf("bytes %d to %d of %s are not allocated", at, end, f.Name())
		}
		ex := unsafe.Slice((*fiemapExtent)(unsafe.Pointer(&buf[unsafe.Sizeof(fiemapHead{})])), h.mapped)
		last := false
		for _, e := range ex {
			lo, hi := max(int64(e.logical), at), min(int64(e.logical+e.length), end)
			if hi > lo {
				out = append(out, [2]int64{int64(e.physical) + lo - int64(e.logical), hi - lo})
			}
			at = max(at, int64(e.logical+e.length))
			last = last || e.flags&fiemapExtentLast != 0
		}
		if last {
			break
		}
	}
	return out, nil
}

// Grower is the growth watch: it gives every mounted image in a folder of
// images room ahead, every growEvery, from its Start until Stop or the
// folder goes. The zero Grower is ready to start.
type Grower struct {
	once     sync.Once
	stop     chan struct{}
	stopOnce sync.Once
	mu       sync.Mutex
	hostFull map[string]bool // images whose last growth the host refused; nil until one is
}

// Start starts the watch on the images in disks (named <name>.img), once,
// saying in log when the host refuses a box room and when it gives it
// again.
func (g *Grower) Start(disks string, log *slog.Logger) {
	g.once.Do(func() {
		g.stop = make(chan struct{})
		go g.run(disks, log)
	})
}

// Stop ends the watch; it never starts after.
func (g *Grower) Stop() {
	g.stopOnce.Do(func() {
		g.once.Do(func() {})
		if g.stop != nil {
			close(g.stop)
		}
	})
}

// HostRefused says whether the host refused the last growth of the image
// named name (a box's ID).
func (g *Grower) HostRefused(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hostFull[name]
}

// setHostRefused records whether the host refused the last growth of the
// image named name, and answers whether that changed.
func (g *Grower) setHostRefused(name string, refused bool) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hostFull[name] == refused {
		return false
	}
	if refused {
		if g.hostFull == nil {
			g.hostFull = make(map[string]bool)
		}
		g.hostFull[name] = true
	} else {
		delete(g.hostFull, name)
	}
	return true
}

// run is the growth watch: each image mounted with held room and
// less free than its box writes in a second (at least roomAhead, at most a
// quarter of the host's free room) is given that much more, so a box
// writing fast has room for a second of its writes however late the
// watch's next turn comes on a busy host. The host
// refusing it is said once in the log, and again when room is given after.
func (g *Grower) run(disks string, log *slog.Logger) {
	t := time.NewTicker(growEvery)
	defer t.Stop()
	type seen struct {
		free int64
		at   time.Time
	}
	last := make(map[string]seen)
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		ents, err := os.ReadDir(disks)
		if errors.Is(err, fs.ErrNotExist) {
			return // the data folder is gone
		}
		// A box writing fast is given at most a quarter of what the host
		// has free, so it never takes the host's last room ahead of need.
		var hs unix.Statfs_t
		hostFree := int64(1 << 62)
		if unix.Statfs(disks, &hs) == nil {
			hostFree = int64(hs.Bavail) * int64(hs.Bsize)
		}
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), ".img")
			if !ok {
				continue
			}
			img := filepath.Join(disks, e.Name())
			fsd := FSDirOf(img)
			if Held(fsd) == 0 || !IsMounted(fsd) {
				continue
			}
			var s unix.Statfs_t
			if unix.Statfs(fsd, &s) != nil {
				continue
			}
			free, now := int64(s.Bavail)*int64(s.Bsize), time.Now()
			ahead := int64(roomAhead)
			if l, ok := last[name]; ok && l.free > free {
				ahead = max(ahead, min(int64(float64(l.free-free)/now.Sub(l.at).Seconds()), hostFree/4))
			}
			last[name] = seen{free, now}
			if free >= ahead {
				continue
			}
			// The host keeps hostReserve for boxsnap's own files: a give
			// that would take it is the host being full.
			ahead = min(ahead, hostFree-hostReserve)
			var given int64
			err := error(unix.ENOSPC)
			if ahead >= 1<<20 {
				given, err = giveRoom(fsd, img, ahead)
				hostFree -= given
			}
			last[name] = seen{free + given, now}
			full := errors.Is(err, unix.ENOSPC)
			switch {
			case !g.setHostRefused(name, full):
			case full:
				log.Warn("local backend: the host's disk is full: a box's disk cannot grow toward its bound, and its writes fail (no space left on device) until room is made on the host; its files are kept", "box", name)
			default:
				log.Info("local backend: the host has room again, and a box's disk grows toward its bound again", "box", name)
			}
			if err != nil && !full {
				log.Error("local backend: a box's disk could not grow", "box", name, "err", err)
			}
		}
	}
}

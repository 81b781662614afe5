package qemu

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// An ext4 file system is read in user space by e2fsprogs' debugfs, run as a
// subprocess on a private raw copy of the disk, read-only: never mounted in
// the host's kernel. Every name and byte the file system holds is hostile.
// So debugfs is only ever given inode numbers (<12>), never a name: paths
// are resolved here, one folder at a time. Names are read from "ls -p",
// whose fields are separated by "/", which no name can hold, so a name with
// a newline in it stays one name. An inode's type, size, time
// and a short link's target are read from "inode_dump", a hex dump of its
// raw bytes; a file's content, and a long link's target, from "cat", which
// writes exactly its size.

// rootIno is the inode of an ext4 file system's top folder.
const rootIno = 2

// Inode flags boxsnap reads (ext4's i_flags).
const (
	flagExtents = 0x80000
)

// inode is what boxsnap reads of one inode, from its raw bytes.
type inode struct {
	ino   uint32
	mode  uint16
	size  int64
	mtime time.Time
	flags uint32
	block [60]byte
}

// kind names the inode's type as providers.FileEntry does: "file", "dir",
// "link" or "other" (a FIFO, a device, a socket: never read).
func (n inode) kind() string {
	switch n.mode & 0xf000 {
	case 0x8000:
		return "file"
	case 0x4000:
		return "dir"
	case 0xa000:
		return "link"
	}
	return "other"
}

// perm is the inode's permission bits and setuid, setgid and sticky.
func (n inode) perm() uint32 { return uint32(n.mode & 0o7777) }

// shortLink says the link's target is in the inode itself (a fast link).
func (n inode) shortLink() bool {
	return n.kind() == "link" && n.size < int64(len(n.block)) && n.flags&flagExtents == 0
}

// parseInode reads an inode's fields from its raw bytes (ext4's layout, at
// least its first 128 bytes).
func parseInode(ino uint32, raw []byte) (inode, error) {
	if len(raw) < 128 {
		return inode{}, fmt.Errorf("inode %d: %d bytes, too few", ino, len(raw))
	}
	le := binary.LittleEndian
	n := inode{ino: ino, mode: le.Uint16(raw[0:]), flags: le.Uint32(raw[0x20:])}
	n.size = int64(le.Uint32(raw[0x4:])) | int64(le.Uint32(raw[0x6c:]))<<32
	if n.size < 0 {
		return inode{}, fmt.Errorf("inode %d: its size is past what boxsnap reads", ino)
	}
	n.mtime = time.Unix(int64(int32(le.Uint32(raw[0x10:]))), 0).UTC()
	copy(n.block[:], raw[0x28:0x28+60])
	return n, nil
}

// dirent is one entry of a folder, as "ls -p" gives it.
type dirent struct {
	ino  uint32
	name string
}

// parseList reads "ls -p"'s output: for each entry
// "/ino/mode/uid/gid/name/size/\n" (a folder's size empty). A name holds
// no "/", so each field ends at the next one. "." and ".." are left out.
func parseList(out []byte) ([]dirent, error) {
	s := string(out)
	var list []dirent
	for {
		s = strings.TrimLeft(s, "\n")
		if s == "" {
			return list, nil
		}
		if s[0] != '/' {
			return nil, errors.New("debugfs's listing is not in the form asked")
		}
		var f [6]string
		rest := s[1:]
		for i := range f {
			j := strings.IndexByte(rest, '/')
			if j < 0 {
				return nil, errors.New("debugfs's listing ends part way through an entry")
			}
			f[i], rest = rest[:j], rest[j+1:]
		}
		if !strings.HasPrefix(rest, "\n") {
			return nil, errors.New("debugfs's listing has an entry that does not end where it should")
		}
		s = rest
		ino, err := strconv.ParseUint(f[0], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("debugfs's listing has the inode %q", f[0])
		}
		if ino == 0 || f[4] == "." || f[4] == ".." || f[4] == "" {
			continue // inode 0: a removed entry's room
		}
		list = append(list, dirent{ino: uint32(ino), name: f[4]})
	}
}

// parseDumps reads the output of one "inode_dump <ino>" for each of inos,
// run from a command file: debugfs echoes each command ("debugfs:
// inode_dump <12>"), then the inode's bytes as lines of an octal offset,
// eight groups of four hex digits and the bytes as text (where a byte that
// is not printable is "."), and "*" for lines the same as the one before.
// Only the offset and the eight groups are read.
func parseDumps(out []byte, inos []uint32) ([][]byte, error) {
	res := make([][]byte, 0, len(inos))
	var cur []byte
	var last []byte
	repeat := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	flush := func() {
		if cur != nil {
			res = append(res, cur)
		}
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "debugfs: "):
			flush()
			i := len(res)
			if i >= len(inos) || line != fmt.Sprintf("debugfs: inode_dump <%d>", inos[i]) {
				return nil, errors.New("debugfs answered inode dumps out of the order asked")
			}
			cur, last, repeat = []byte{}, nil, false
		case line == "*":
			repeat = true
		case line == "" || cur == nil:
		default:
			f := strings.Fields(line)
			if len(f) < 9 {
				return nil, fmt.Errorf("debugfs's inode dump has the line %q", line)
			}
			off, err := strconv.ParseUint(f[0], 8, 32)
			if err != nil || off%16 != 0 || off > 1<<16 {
				return nil, fmt.Errorf("debugfs's inode dump has the offset %q", f[0])
			}
			for repeat && uint64(len(cur)) < off && last != nil {
				cur = append(cur, last...)
			}
			repeat = false
			if uint64(len(cur)) != off {
				return nil, fmt.Errorf("debugfs's inode dump skips to %d", off)
			}
			b, err := hex.DecodeString(strings.Join(f[1:9], ""))
			if err != nil || len(b) != 16 {
				return nil, fmt.Errorf("debugfs's inode dump has the line %q", line)
			}
			cur, last = append(cur, b...), b
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	flush()
	if len(res) != len(inos) {
		return nil, fmt.Errorf("debugfs dumped %d of %d inodes", len(res), len(inos))
	}
	return res, nil
}

// fsImage is an ext4 file system in a raw disk image: the file, and where
// the file system starts in it.
type fsImage struct {
	path   string
	offset int64
}

// spec is the image as debugfs opens it (its unix I/O's offset option).
func (f fsImage) spec() string {
	if f.offset == 0 {
		return f.path
	}
	return fmt.Sprintf("%s?offset=%d", f.path, f.offset)
}

// debugfs runs one request (-R) or a command file (-f) against the image,
// read-only and in catastrophic mode (the bitmaps are not read: nothing is
// written), and answers its output. Anything on its error output beyond its
// banner is an error.
func (f fsImage) debugfs(ctx context.Context, request string, cmdFile string) ([]byte, error) {
	args := []string{"-c"}
	if cmdFile != "" {
		args = append(args, "-f", cmdFile)
	} else {
		args = append(args, "-R", request)
	}
	cmd := exec.CommandContext(ctx, "debugfs", append(args, f.spec())...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "TZ=UTC"}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("debugfs: %w: %s", err, debugfsErrors(errOut.Bytes()))
	}
	if e := debugfsErrors(errOut.Bytes()); e != "" {
		return nil, fmt.Errorf("debugfs: %s", e)
	}
	return out.Bytes(), nil
}

// debugfsErrors is what debugfs wrote on its error output beyond its banner
// and its catastrophic mode's note, at most a few hundred bytes, quoted.
func debugfsErrors(b []byte) string {
	var keep []string
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "debugfs ") || strings.HasPrefix(line, "catastrophic mode") {
			continue
		}
		keep = append(keep, line)
	}
	s := strings.Join(keep, "; ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}

// list lists the folder whose inode is dir.
func (f fsImage) list(ctx context.Context, dir uint32) ([]dirent, error) {
	out, err := f.debugfs(ctx, fmt.Sprintf("ls -p <%d>", dir), "")
	if err != nil {
		return nil, err
	}
	return parseList(out)
}

// inodes reads the inodes inos, in one debugfs run.
func (f fsImage) inodes(ctx context.Context, dir string, inos []uint32) ([]inode, error) {
	if len(inos) == 0 {
		return nil, nil
	}
	cmds, err := os.CreateTemp(dir, "inodes-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(cmds.Name()) }()
	w := bufio.NewWriter(cmds)
	for _, ino := range inos {
		fmt.Fprintf(w, "inode_dump <%d>\n", ino)
	}
	if err := w.Flush(); err != nil {
		_ = cmds.Close()
		return nil, err
	}
	if err := cmds.Close(); err != nil {
		return nil, err
	}
	out, err := f.debugfs(ctx, "", cmds.Name())
	if err != nil {
		return nil, err
	}
	raws, err := parseDumps(out, inos)
	if err != nil {
		return nil, err
	}
	res := make([]inode, len(raws))
	for i, raw := range raws {
		if res[i], err = parseInode(inos[i], raw); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// open streams the content of the inode n (a file, or a long link's
// target): exactly its size, or a read error at the end.
func (f fsImage) open(ctx context.Context, n inode) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, "debugfs", "-c", "-R", fmt.Sprintf("cat <%d>", n.ino), f.spec())
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "TZ=UTC"}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("debugfs: %w", err)
	}
	return &catReader{r: io.LimitReader(out, n.size), raw: out, left: n.size, cmd: cmd, cancel: cancel, errOut: &errOut}, nil
}

// catReader is one inode's content from debugfs's cat: a read error at the
// end where it gave fewer bytes than the inode's size, or said an error.
type catReader struct {
	r      io.Reader
	raw    io.Reader
	left   int64
	cmd    *exec.Cmd
	cancel context.CancelFunc
	errOut *bytes.Buffer
	done   bool
}

func (c *catReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if err == io.EOF && c.left > 0 {
		return n, fmt.Errorf("debugfs gave %d bytes fewer than the file's size: %w", c.left, c.wait())
	}
	if err == io.EOF {
		if extra, _ := io.Copy(io.Discard, c.raw); extra > 0 {
			_ = c.wait()
			return n, fmt.Errorf("debugfs gave %d bytes more than the file's size", extra)
		}
		if werr := c.wait(); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// wait ends debugfs and answers what it said of an error, if anything.
func (c *catReader) wait() error {
	if c.done {
		return nil
	}
	c.done = true
	err := c.cmd.Wait()
	c.cancel()
	if e := debugfsErrors(c.errOut.Bytes()); e != "" {
		return fmt.Errorf("debugfs: %s", e)
	}
	if err != nil {
		return fmt.Errorf("debugfs: %w", err)
	}
	return nil
}

func (c *catReader) Close() error {
	if c.done {
		return nil
	}
	c.cancel()
	_ = c.wait()
	return nil
}

// linkTarget reads a link's target as stored: a short one from the inode,
// a long one (at most a block) by cat.
func (f fsImage) linkTarget(ctx context.Context, n inode) (string, error) {
	if n.shortLink() {
		return string(n.block[:n.size]), nil
	}
	if n.size > 4096 {
		return "", fmt.Errorf("a link of %d bytes: %w", n.size, providers.ErrIncomplete)
	}
	rc, err := f.open(ctx, n)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

// hashes reads the content of each of ns in one debugfs run, from a command
// file of "cat <ino>", and answers their hashes. debugfs echoes each command
// ("debugfs: cat <12>") before the inode's content, exactly its size, so
// the stream is cut by the sizes the inodes give; an echo not where it
// should be is an error.
func (f fsImage) hashes(ctx context.Context, dir string, ns []inode) ([][sha256.Size]byte, error) {
	if len(ns) == 0 {
		return nil, nil
	}
	cmds, err := os.CreateTemp(dir, "cat-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(cmds.Name()) }()
	w := bufio.NewWriter(cmds)
	for _, n := range ns {
		fmt.Fprintf(w, "cat <%d>\n", n.ino)
	}
	if err := w.Flush(); err != nil {
		_ = cmds.Close()
		return nil, err
	}
	if err := cmds.Close(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "debugfs", "-c", "-f", cmds.Name(), f.spec())
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "TZ=UTC"}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("debugfs: %w", err)
	}
	sums, readErr := readHashes(bufio.NewReaderSize(out, 1<<16), ns)
	if readErr != nil {
		cancel()
	}
	waitErr := cmd.Wait()
	if readErr != nil {
		return nil, readErr
	}
	if e := debugfsErrors(errOut.Bytes()); e != "" {
		return nil, fmt.Errorf("debugfs: %s", e)
	}
	if waitErr != nil {
		return nil, fmt.Errorf("debugfs: %w", waitErr)
	}
	return sums, nil
}

// readHashes cuts debugfs's stream of cats into ns's contents and hashes
// each.
func readHashes(r *bufio.Reader, ns []inode) ([][sha256.Size]byte, error) {
	sums := make([][sha256.Size]byte, len(ns))
	for i, n := range ns {
		want := fmt.Sprintf("debugfs: cat <%d>\n", n.ino)
		got, err := r.ReadString('\n')
		if err != nil || got != want {
			return nil, fmt.Errorf("debugfs's stream of files is not in the order asked (at inode %d)", n.ino)
		}
		h := sha256.New()
		if _, err := io.CopyN(h, r, n.size); err != nil {
			return nil, fmt.Errorf("debugfs gave fewer bytes than inode %d's size: %w", n.ino, err)
		}
		copy(sums[i][:], h.Sum(nil))
	}
	if extra, _ := io.Copy(io.Discard, r); extra > 0 {
		return nil, fmt.Errorf("debugfs gave %d bytes more than the files' sizes", extra)
	}
	return sums, nil
}

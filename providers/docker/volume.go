package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/changerecord"
)

// volumeTake copies a box's volume into a snapshot's volume in two passes,
// so that the box is paused only for what it changed during the first: a
// copier container, running, with the box's volume read-only at /from and
// the snapshot's at /to, first (the box running) records the stats of every
// path and copies them all, then (the box paused) scans again and copies
// only the paths whose stat differs from the first scan's, and deletes the
// paths gone. A path's change time moves on every write and cannot be set
// back, so a path whose stat is the same was copied whole in the first
// pass.
type volumeTake struct {
	b  *Backend
	id string // the copier's container
}

// idleCmd keeps the copier running between its two passes.
var idleCmd = []string{"/bin/busybox", "sleep", "2147483647"}

// startVolumeTake makes and starts the copier, labelled with the snapshot
// (so a take cut short is known by it, and its delete removes it).
func (b incremental) startVolumeTake(ctx context.Context, snap, vol string) (*volumeTake, error) {
	id, err := b.createCopier(ctx, snap, idleCmd, copyMounts(vol, snapVolume(snap)))
	if err != nil {
		return nil, err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := b.c.ContainerStart(cctx, id, client.ContainerStartOptions{}); err != nil {
		b.removeCopier(ctx, id)
		return nil, wrap(err, "start the copier")
	}
	return &volumeTake{b: b.Backend, id: id}, nil
}

// close removes the copier, even after ctx ends.
func (v *volumeTake) close(ctx context.Context) { v.b.removeCopier(ctx, v.id) }

// firstPassScript scans /from into /tmp/first, then copies it all; a path
// that goes while it is copied is left to the second pass, and only a
// full disk fails it.
const firstPassScript = `B=/bin/busybox
cd /from && ` + changerecord.ScanFind + ` > /tmp/first 2>/dev/null
E=$($B cp -a /from/. /to/ 2>&1) || case "$E" in *"No space left"*) echo "$E"; exit 1;; esac
true`

// secondPassScript scans /from again (printed after changerecord.ScanMark,
// the take's record), and with the awk program in $1 finds each path new or
// changed since /tmp/first ("c") and each path gone ("d"); it deletes what went,
// copies what changed (a folder is made, its files come each on its own),
// and last gives each changed folder its mode, owner and times.
var secondPassScript = `B=/bin/busybox
[ -s /tmp/first ] || { echo "the first pass recorded nothing"; exit 1; }
cd /from && ` + changerecord.ScanFind + ` > /tmp/now || exit 1
echo ` + changerecord.ScanMark + ` && $B cat /tmp/now
$B awk "$1" /tmp/first /tmp/now > /tmp/delta || exit 1
while IFS= read -r l; do p="${l#?}"; case "$l" in
 d*) $B rm -rf "/to/$p" || exit 1;;
 c*) if [ -d "/from/$p" ] && [ ! -L "/from/$p" ]; then
   [ -d "/to/$p" ] && [ ! -L "/to/$p" ] || { $B rm -rf "/to/$p" && $B mkdir "/to/$p"; } || exit 1
   echo "$p" >> /tmp/dirs
  else $B rm -rf "/to/$p" && $B cp -a "/from/$p" "/to/$p" || exit 1; fi;;
esac; done < /tmp/delta
[ -f /tmp/dirs ] || exit 0
$B sort -r /tmp/dirs | while IFS= read -r p; do
 $B chown "$($B stat -c %u:%g "/from/$p")" "/to/$p" && $B chmod "$($B stat -c %a "/from/$p")" "/to/$p" && $B touch -r "/from/$p" "/to/$p" || exit 1
done`

// deltaAwk compares two scans: the first file's lines, then the second's;
// a line is the stat, then "|" and the path after the seventh "|".
const deltaAwk = `function path(l,  i) { for (i = 0; i < 7; i++) l = substr(l, index(l, "|") + 1); return l }
NR == FNR { p = path($0); old[p] = substr($0, 1, length($0) - length(p)); next }
{ p = path($0); seen[p] = 1; if (!(p in old) || old[p] != substr($0, 1, length($0) - length(p))) print "c" p }
END { for (p in old) if (!(p in seen)) print "d" p }`

// first runs the first pass, the box running.
func (v *volumeTake) first(ctx context.Context) error {
	_, err := v.exec(ctx, firstPassScript)
	return err
}

// second runs the second pass, the box paused, and answers the volume's
// stats (the take's record) and the bytes of its files.
func (v *volumeTake) second(ctx context.Context) (changerecord.VolumeState, int64, error) {
	out, err := v.exec(ctx, secondPassScript, deltaAwk)
	if err != nil {
		return nil, 0, err
	}
	st, _, err := changerecord.ParseScan(out)
	if err != nil {
		return nil, 0, err
	}
	return st, fileBytes(st), nil
}

// fileBytes adds up the sizes of a scan's regular files.
func fileBytes(st changerecord.VolumeState) int64 {
	var n int64
	for _, line := range st {
		f := strings.SplitN(line, "|", 3)
		if len(f) < 3 {
			continue
		}
		mode, _ := strconv.ParseUint(f[0], 16, 32)
		size, _ := strconv.ParseInt(f[1], 10, 64)
		if mode&0o170000 == 0o100000 {
			n += size
		}
	}
	return n
}

// exec runs a shell script in the copier and answers its output; a script
// that fails says why, and a full disk is ErrNoRoom.
func (v *volumeTake) exec(ctx context.Context, script string, args ...string) (string, error) {
	cmd := append([]string{"/bin/busybox", "sh", "-c", script, "sh"}, args...)
	ex, err := v.b.c.ExecCreate(ctx, v.id, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", wrap(err, "run the copy in the copier")
	}
	att, err := v.b.c.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", wrap(err, "run the copy in the copier")
	}
	defer att.Close()
	return execOutput(ctx, v.b, ex.ID, att.Reader)
}

// execOutput reads a copier's process's output to its end and says how it
// ended: a process that fails says why, and a full disk is ErrNoRoom.
func execOutput(ctx context.Context, b *Backend, id string, r io.Reader) (string, error) {
	var out, errs bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errs, r); err != nil {
		return "", fmt.Errorf("read the copier's output: %w", err)
	}
	st, err := b.c.ExecInspect(ctx, id, client.ExecInspectOptions{})
	if err != nil {
		return "", wrap(err, "read how the copy ended")
	}
	if st.ExitCode != 0 {
		return "", b.roomWords(ctx, copyFailed(st.ExitCode, out.String()+errs.String()))
	}
	return out.String(), nil
}

// copyFailed says how a copy in the copier ended, as runCopier does.
func copyFailed(code int, out string) error {
	out = strings.TrimSpace(out)
	if i := strings.Index(out, changerecord.ScanMark+"\n"); i >= 0 {
		out = out[:i] // the scan's lines say nothing of why
	}
	err := fmt.Errorf("the copy ended with status %d: %s", code, out)
	if strings.Contains(out, "No space left on device") {
		return fmt.Errorf("the Docker host's data root is full: %w (%w)", providers.ErrNoRoom, err)
	}
	return err
}

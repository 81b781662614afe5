package changerecord

import (
	"strings"
	"time"
)

// RacySlack is how far before the stamp of a read of the running box a
// path's time may fall and the path still be read again in the pause: a
// file's times move in the kernel's coarse ticks, so a file written just
// after a read, in the tick it was written in before, keeps its stat, and
// only its time's nearness to the read tells it apart. The stamp is a
// file's time written by the same kernel, so the slack covers no clock's
// error, only a clock set back a little.
const RacySlack = 50 * time.Millisecond

// LocalSlack is RacySlack for a stamp read from the clock of the process
// on the box's own kernel: a file's time is the kernel's coarse time,
// which lags that clock by a tick at most (10 ms at the least frequent
// tick), so the slack covers that tick and a clock set back a little.
const LocalSlack = 20 * time.Millisecond

// RacyLayer adds to d the paths of the layer read while the box ran (then)
// whose modification time falls after since and that are there now: they
// may have been written again since that read in the same tick.
func RacyLayer(d LayerDelta, then, now LayerState, since time.Time) LayerDelta {
	in := map[string]bool{}
	for _, p := range d.Changed {
		in[p] = true
	}
	for p, e := range then {
		if e.Deleted || in[p] || e.last().Before(since) {
			continue
		}
		if n, ok := now[p]; ok && !n.Deleted {
			d.Changed = append(d.Changed, p)
		}
	}
	return d
}

// ScanTimeLayout is how busybox's stat writes a time (%y, %z).
const ScanTimeLayout = "2006-01-02 15:04:05.999999999 -0700"

// RacyVolume answers the paths of a scan of the volume taken while the box
// ran whose change time falls after since: they may have been written again
// since the scan in the same tick.
func RacyVolume(scan VolumeState, since time.Time) map[string]bool {
	out := map[string]bool{}
	for p, st := range scan {
		f := strings.Split(st, "|")
		if len(f) < 7 {
			out[p] = true
			continue
		}
		ctime, err := time.Parse(ScanTimeLayout, f[6])
		if err != nil || !ctime.Before(since) {
			out[p] = true
		}
	}
	return out
}

// Settled says whether a box that reads as the record says is as the
// record's take held it: the record knows its stamp, and no path of the
// layer (by its modification time) or of the volume (by its change time)
// falls at or after it, so none was read in a tick a later write could
// share.
func (r *ChangeRecord) Settled() bool {
	if r == nil || r.Stamp.IsZero() {
		return false
	}
	for _, e := range r.Layer {
		if !e.Deleted && !e.last().Before(r.Stamp) {
			return false
		}
	}
	return len(RacyVolume(r.Volume, r.Stamp)) == 0
}

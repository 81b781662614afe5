package changerecord

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
)

// A container ID as the engine writes them.
var engineID = strings.Repeat("ab", 32)

func sampleRecord() *ChangeRecord {
	at := time.Date(2026, 12, 6, 17, 0, 0, 123456789, time.UTC)
	return &ChangeRecord{Snap: "sn7record", Image: "sha256:" + engineID, Layers: 3, VolumeIn: true,
		Layer: LayerState{
			"/srv/data": {Stat: container.PathStat{Name: "data", Size: 4096, Mode: 0o644, Mtime: at}, Ctime: at},
			"/etc/gone": {Deleted: true},
		},
		Volume: VolumeState{"./data": "81a4|4096|12|0|0|2026-12-06 17:00:00.123456789 +0000|2026-12-06 17:00:00.123456789 +0000"},
		Stamp:  at.Add(time.Second)}
}

// TestRecordSettledOnlyPastItsStamp: a record is settled (a box reading as
// it says is as its take held it) only where it knows its stamp and every
// path of its layer and its volume was last written before that stamp; a
// path written at or after it, in the layer or in the volume, unsettles it.
func TestRecordSettledOnlyPastItsStamp(t *testing.T) {
	rec := sampleRecord()
	if !rec.Settled() {
		t.Errorf("a record whose paths were all written a second before its stamp is not settled")
	}
	noStamp := sampleRecord()
	noStamp.Stamp = time.Time{}
	if noStamp.Settled() {
		t.Errorf("a record that knows no stamp is settled")
	}
	layer := sampleRecord()
	layer.Stamp = layer.Layer["/srv/data"].Stat.Mtime
	if layer.Settled() {
		t.Errorf("a record whose layer has a path written at its stamp is settled")
	}
	vol := sampleRecord()
	vol.Layer = LayerState{}
	vol.Stamp = time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC)
	if vol.Settled() {
		t.Errorf("a record whose volume has a path changed after its stamp is settled")
	}
}

// TestRecordFileIsReadBackByItsInstallOnly: a record's file reads back as
// the record written, for the install and the container that wrote it;
// another install's, another container's, or a file that is not a
// record's read as no record, and a folder of "" or an ID that is not an
// engine's keeps the record in memory only.
func TestRecordFileIsReadBackByItsInstallOnly(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord()
	if err := SaveRecord(dir, "in7install", engineID, rec); err != nil {
		t.Fatalf("SaveRecord: %v", err)
	}
	got, err := LoadRecord(dir, "in7install", engineID)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("LoadRecord of the record written = %+v, %v: want %+v", got, err, rec)
	}
	for _, c := range []struct{ why, install, id string }{
		{"another install's", "in7another", engineID},
		{"another container's", "in7install", strings.Repeat("cd", 32)},
		{"an ID that is not an engine's", "in7install", "../" + engineID},
	} {
		if got, err := LoadRecord(dir, c.install, c.id); got != nil || err != nil {
			t.Errorf("LoadRecord of %s record = %+v, %v: want none", c.why, got, err)
		}
	}
	if err := os.WriteFile(recordPath(dir, engineID), []byte("not a record"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadRecord(dir, "in7install", engineID); got != nil || err != nil {
		t.Errorf("LoadRecord of a file that is not a record's = %+v, %v: want none", got, err)
	}
	RemoveRecord(dir, engineID)
	if _, err := os.Stat(recordPath(dir, engineID)); !os.IsNotExist(err) {
		t.Errorf("after RemoveRecord the record's file is still there (%v)", err)
	}
	memory := t.TempDir()
	if err := SaveRecord("", "in7install", engineID, rec); err != nil {
		t.Errorf("SaveRecord with no folder: %v", err)
	}
	if err := SaveRecord(memory, "in7install", "not-an-id", rec); err != nil {
		t.Errorf("SaveRecord of an ID that is not an engine's: %v", err)
	}
	if files, _ := filepath.Glob(filepath.Join(memory, "*", "*")); len(files) > 0 {
		t.Errorf("SaveRecord of an ID that is not an engine's wrote %v: want nothing", files)
	}
}

// TestLayerSinceFindsChangedAndGonePaths: a path new, or whose stat
// differs from the record's, is read again; a path deleted since, or no
// longer in the layer, is gone; a path that reads as recorded is neither.
func TestLayerSinceFindsChangedAndGonePaths(t *testing.T) {
	rec := sampleRecord().Layer
	rec["/srv/same"] = LayerEntry{Stat: container.PathStat{Size: 1}}
	rec["/srv/dropped"] = LayerEntry{Stat: container.PathStat{Size: 1}}
	now := LayerState{
		"/srv/same":  rec["/srv/same"],
		"/srv/data":  {Stat: container.PathStat{Size: 4097, Mode: 0o644, Mtime: rec["/srv/data"].Stat.Mtime}},
		"/srv/new":   {Stat: container.PathStat{Size: 2}},
		"/etc/gone":  {Deleted: true},
		"/srv/wiped": {Deleted: true},
	}
	d := LayerSince(rec, now)
	slices.Sort(d.Changed)
	slices.Sort(d.Gone)
	if want := []string{"/srv/data", "/srv/new"}; !slices.Equal(d.Changed, want) {
		t.Errorf("LayerSince changed = %v: want %v", d.Changed, want)
	}
	if want := []string{"/srv/dropped", "/srv/wiped"}; !slices.Equal(d.Gone, want) {
		t.Errorf("LayerSince gone = %v: want %v", d.Gone, want)
	}
	if d.Paths() != 4 {
		t.Errorf("LayerSince paths = %d: want 4", d.Paths())
	}
	if n := LayerSince(now, now).Paths(); n != 0 {
		t.Errorf("LayerSince of a layer unchanged = %d paths: want 0", n)
	}
}

// TestParseScanReadsTheVolume: the scan's lines after its mark are the
// volume's paths and stat lines, what came before is the copy's own, and
// a scan with no mark or a line with too few fields is refused in words.
func TestParseScanReadsTheVolume(t *testing.T) {
	line := "81a4|5|12|0|0|2026-12-06 17:00:00.1 +0000|2026-12-06 17:00:00.2 +0000"
	st, before, err := ParseScan("copied\n" + ScanMark + "\n" + line + "|./a|b\n")
	if err != nil || before != "copied\n" || !reflect.DeepEqual(st, VolumeState{"./a|b": line}) {
		t.Errorf("ParseScan = %v, %q, %v: want ./a|b read whole, and the copy's own output", st, before, err)
	}
	if n := VolumeSince(st, VolumeState{"./a|b": line, "./c": line}); n != 1 {
		t.Errorf("VolumeSince with one path new = %d: want 1", n)
	}
	if _, _, err := ParseScan("copied\n"); err == nil || !strings.Contains(err.Error(), "printed nothing") {
		t.Errorf("ParseScan with no mark = %v: want the scan printed nothing", err)
	}
	if _, _, err := ParseScan(ScanMark + "\n81a4|5|./a\n"); err == nil {
		t.Errorf("ParseScan of a line with too few fields answered no error")
	}
}

// TestRacyPathsAreReadAgain: a path read while the box ran whose time
// falls at or after the stamp taken before the read is read again in the
// pause (it may have been written again in the same tick); one whose time
// is before the stamp is not, nor one gone since.
func TestRacyPathsAreReadAgain(t *testing.T) {
	since := time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC)
	then := LayerState{
		"/old":  {Stat: container.PathStat{Mtime: since.Add(-time.Second)}},
		"/tick": {Stat: container.PathStat{Mtime: since}},
		"/gone": {Stat: container.PathStat{Mtime: since.Add(time.Millisecond)}},
	}
	now := LayerState{"/old": then["/old"], "/tick": then["/tick"]}
	if d := RacyLayer(LayerDelta{}, then, now, since); !slices.Equal(d.Changed, []string{"/tick"}) {
		t.Errorf("RacyLayer changed = %v: want [/tick]", d.Changed)
	}
	stamp := func(at time.Time) string {
		return "81a4|5|12|0|0|" + at.Format(ScanTimeLayout) + "|" + at.Format(ScanTimeLayout)
	}
	scan := VolumeState{"./old": stamp(since.Add(-time.Second)), "./tick": stamp(since), "./odd": "81a4|5"}
	if got := RacyVolume(scan, since); !reflect.DeepEqual(got, map[string]bool{"./tick": true, "./odd": true}) {
		t.Errorf("RacyVolume = %v: want ./tick and the line it cannot read", got)
	}
}

// TestLayerSinceSeesAChangeTime: a path whose stat reads the same (a write
// that set its modification time back and kept its size) but whose change
// time moved is changed; a read without a change time (a record written
// before they were read) compares by the stat alone.
func TestLayerSinceSeesAChangeTime(t *testing.T) {
	at := time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC)
	st := container.PathStat{Name: "state.txt", Size: 2, Mode: 0o644}
	rec := LayerState{"/state.txt": {Stat: st, Ctime: at}}
	if d := LayerSince(rec, LayerState{"/state.txt": {Stat: st, Ctime: at.Add(time.Second)}}); len(d.Changed) != 1 {
		t.Errorf("a path whose change time moved, its stat the same, reads %+v: want changed", d)
	}
	if d := LayerSince(rec, LayerState{"/state.txt": {Stat: st, Ctime: at}}); d.Paths() != 0 {
		t.Errorf("a path read alike, change time and all, reads %+v: want unchanged", d)
	}
	if d := LayerSince(LayerState{"/state.txt": {Stat: st}}, rec); d.Paths() != 0 {
		t.Errorf("a record without change times against a read with one reads %+v: want unchanged by the stat", d)
	}
}

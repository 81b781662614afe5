package take

import (
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// uniqueTimedName makes an undo's name unique in taken without a counter:
// name is said at a minute ("before the restore at 11:02"); a repeat says
// the seconds too ("… at 11:02:07"), then the date ("… at 11:02:07 on 2
// Jan"), so each name still says when. Only past those does it fall back
// to snapshots.UniqueName.
func uniqueTimedName(name string, t time.Time, tz *time.Location, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	minute := t.In(tz).Format("15:04")
	if !strings.HasSuffix(name, minute) {
		return snapshots.UniqueName(name, taken)
	}
	secs := name + t.In(tz).Format(":05")
	if !taken[secs] {
		return secs
	}
	if dated := secs + t.In(tz).Format(" on 2 Jan"); !taken[dated] {
		return dated
	}
	return snapshots.UniqueName(secs+t.In(tz).Format(" on 2 Jan"), taken)
}

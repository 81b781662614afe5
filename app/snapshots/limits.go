package snapshots

import "time"

// Numbers the rules use, each written once.
const (
	// DefaultPerBox is the snapshots a box holds, undos apart.
	DefaultPerBox = 5
	// MinPerBox and MaxPerBox bound the setting.
	MinPerBox, MaxPerBox = 1, 50
	// UndosPerBox is the undos a box holds besides.
	UndosPerBox = 2
	// DefaultRoomPercent refuses takes past it; the setting's range is 50 to
	// 90.
	DefaultRoomPercent = 85
	MinRoomPercent     = 50
	MaxRoomPercent     = 90
	// MetadataBelowRoom: thin metadata refuses 5 points below the room
	// setting; SweepAboveRoom: the room sweep deletes 7 points above it.
	MetadataBelowRoom = 5
	SweepAboveRoom    = 7
	// DefaultKeepDays is how long Keep keeps; the range is 1 to 365, and a
	// chosen date is at most 365 days away.
	DefaultKeepDays = 30
	MaxKeepDays     = 365
	// GoesSoonDays is when a kept snapshot's row says "goes in 3 days" in
	// amber; the tab's line counts keeps ending within 7 days.
	GoesSoonDays   = 3
	EndingSoonDays = 7
	// MaxNameLength and MaxNoteBytes bound a snapshot's name and note.
	MaxNameLength = 60
	MaxNoteBytes  = 1024
	// PictureWait is the longest a picture may delay a take.
	PictureWait = 2 * time.Second
	// PictureWidth and PictureQuality; PicturesCapBytes caps all pictures,
	// oldest unkept first.
	PictureWidth     = 320
	PictureQuality   = 70
	PicturesCapBytes = 48 << 20
	// FailedKeptFor: a failed record goes after 24 hours; LostKeptFor: a lost
	// one after 7 days; LostAfter: missing from two successful listings this
	// far apart (fixed, not a setting).
	FailedKeptFor = 24 * time.Hour
	LostKeptFor   = 7 * 24 * time.Hour
	// ToolAnswersKeptFor is how long a retry key stays (a tool's answer, an
	// ended operation's key) unless BOXSNAP_RETRY_KEYS_KEPT_FOR says other:
	// a retry comes within minutes of a lost answer; an older key is free.
	ToolAnswersKeptFor = 7 * 24 * time.Hour
	LostAfter          = 10 * time.Minute
	// RestoreNoticeFor is how long a box's page shows a restore's notice.
	RestoreNoticeFor = 24 * time.Hour
)

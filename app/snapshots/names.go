package snapshots

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// DefaultName is a snapshot's name when none is given: the time in the
// owner's time zone, "Thu 10:42".
func DefaultName(t time.Time, tz *time.Location) string {
	return t.In(tz).Format("Mon 15:04")
}

// UndoName is a restore's undo's name, "before the restore at 11:02".
func UndoName(t time.Time, tz *time.Location) string {
	return "before the restore at " + t.In(tz).Format("15:04")
}

// CleanName checks a name given by a caller: trimmed, 1 to 60 characters,
// no control characters.
func CleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", refusal(CodeInvalid, nameEmptyWords)
	}
	if n := utf8.RuneCountInString(name); n > MaxNameLength {
		return "", refusal(CodeInvalid, nameTooLongWords(MaxNameLength, n))
	}
	if !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 || strings.IndexFunc(name, isBidiControl) >= 0 {
		return "", refusal(CodeInvalid, nameControlWords)
	}
	return name, nil
}

// CleanNote checks a note: at most 1 KB; empty means none.
func CleanNote(note string) (*string, error) {
	note = strings.TrimSpace(note)
	if note == "" {
		return nil, nil
	}
	if len(note) > MaxNoteBytes {
		return nil, refusal(CodeInvalid, noteTooLongWords(len(note)))
	}
	if !utf8.ValidString(note) {
		return nil, refusal(CodeInvalid, noteNotTextWords)
	}
	if err := CheckText("A note", note); err != nil {
		return nil, err
	}
	return &note, nil
}

// UniqueName returns name, or name with " (2)", " (3)" ... so that it is not
// in taken ("a repeat gets (2)"). The result stays within 60 characters by
// shortening the name before the suffix.
func UniqueName(name string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf(" (%d)", i)
		base := name
		for utf8.RuneCountInString(base)+len(suffix) > MaxNameLength {
			_, size := utf8.DecodeLastRuneInString(base)
			base = base[:len(base)-size]
		}
		if c := base + suffix; !taken[c] {
			return c
		}
	}
}

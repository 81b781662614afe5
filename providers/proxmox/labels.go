package proxmox

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Labels: a snapshot's name on Proxmox is NamePrefix and boxsnap's ID, within
// Proxmox's rules (2 to 40 characters, ^[a-z][a-z0-9_-]+$); its description
// says the install, box, snapshot, keep date and identity reset version, and
// nothing else.
const (
	NamePrefix  = "bx"
	labelPrefix = "boxsnap install "
	// ResetTagPrefix is the guest tag an image with the identity reset
	// carries, with its version: "boxsnap-reset-1".
	ResetTagPrefix = "boxsnap-reset-"
	maxSnapName    = 40
)

var snapNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]+$`)

// SnapshotName is the name boxsnap gives snapshot id on Proxmox.
func SnapshotName(id string) (string, error) {
	n := NamePrefix + strings.ToLower(id)
	if len(n) < 2 || len(n) > maxSnapName || !snapNameRE.MatchString(n) {
		return "", fmt.Errorf("snapshot ID %q makes no valid Proxmox snapshot name", id)
	}
	return n, nil
}

// Describe writes a label as a snapshot's description.
func Describe(l providers.Label) string {
	kept := "no"
	if l.KeptUntil != nil {
		kept = l.KeptUntil.UTC().Format(time.RFC3339)
	}
	d := fmt.Sprintf("boxsnap install %s box %s snapshot %s kept %s reset %d", l.Install, l.Box, l.Snapshot, kept, l.ResetVersion)
	if l.Held != "" {
		// A held copy's label also says what it copies, when, and of what
		// kind of box, so one found again still forks.
		at := int64(0)
		if l.SnapshotAt != nil {
			at = l.SnapshotAt.Unix()
		}
		kind := l.Kind
		if kind == "" {
			kind = "unknown"
		}
		d += fmt.Sprintf(" held %s taken %d kind %s", l.Held, at, kind)
	}
	return d
}

// ParseLabel reads a description Describe wrote; ok is false for any other.
func ParseLabel(desc string) (providers.Label, bool) {
	var l providers.Label
	f := strings.Fields(strings.TrimSpace(desc))
	if len(f) < 7 || f[0] != "boxsnap" || len(f)%2 != 1 {
		return l, false
	}
	for i := 1; i+1 < len(f); i += 2 {
		v := f[i+1]
		switch f[i] {
		case "install":
			l.Install = v
		case "box":
			l.Box = v
		case "snapshot":
			l.Snapshot = v
		case "kept":
			if v != "no" {
				t, err := time.Parse(time.RFC3339, v)
				if err != nil {
					return l, false
				}
				t = t.UTC()
				l.KeptUntil = &t
			}
		case "reset":
			l.ResetVersion, _ = strconv.Atoi(v)
		case "held":
			l.Held = v
		case "taken":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return l, false
			}
			t := time.Unix(n, 0).UTC()
			l.SnapshotAt = &t
		case "kind":
			if v != "unknown" {
				l.Kind = v
			}
		default:
			return l, false
		}
	}
	return l, l.Install != "" && l.Box != "" && l.Snapshot != ""
}

var lockedRE = regexp.MustCompile(`is locked \(([a-z-]+)\)`)

// lockError turns Proxmox's "CT is locked (rollback)" into a LockedError
// with the host's command.
func lockError(g providers.Guest, words string) error {
	if m := lockedRE.FindStringSubmatch(words); m != nil {
		return &providers.LockedError{Lock: providers.Lock{Lock: m[1], Fix: unlockWords(g)}}
	}
	return nil
}

func resetVersion(tags string) int {
	for _, t := range strings.FieldsFunc(tags, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		if v, ok := strings.CutPrefix(t, ResetTagPrefix); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// Tags boxsnap puts on the guests it keeps apart from boxes: a held copy, and
// a box's earlier guest after a swap. The listing finds them by these and by
// their labels.
const (
	HeldTag    = "boxsnap-held"
	EarlierTag = "boxsnap-earlier"
)

func hasTag(tags, tag string) bool {
	for _, t := range strings.FieldsFunc(tags, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		if t == tag {
			return true
		}
	}
	return false
}

// heldTags are a held copy's or an earlier guest's tags: boxsnap's, what it
// is, and the identity reset's version, which a fork of it checks.
func heldTags(what string, reset int) string {
	t := "boxsnap"
	if what != "" {
		t += ";" + what
	}
	if reset > 0 {
		t += fmt.Sprintf(";%s%d", ResetTagPrefix, reset)
	}
	return t
}

// dropTags removes tags from a guest's tag list.
func dropTags(tags string, drop ...string) string {
	var keep []string
next:
	for _, t := range strings.FieldsFunc(tags, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		for _, d := range drop {
			if t == d {
				continue next
			}
		}
		keep = append(keep, t)
	}
	return strings.Join(keep, ";")
}

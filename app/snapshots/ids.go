package snapshots

import "github.com/boxsnap/boxsnap/app/ids"

// ID prefixes: a prefix and 12 letters and digits ("sn", "op"). Boxes and
// threads follow the same shape.
const (
	PrefixSnapshot  = "sn"
	PrefixOperation = "op"
	PrefixBox       = "bx"
	PrefixThread    = "th"
	// IDLength is the number of letters and digits after the prefix.
	IDLength = ids.Length
)

// NewID makes an ID: prefix and 12 lowercase letters and digits.
func NewID(prefix string) string { return ids.New(prefix) }

// ValidID reports whether s is an ID with prefix: the prefix and exactly 12
// lowercase letters and digits.
func ValidID(prefix, s string) bool { return ids.Valid(prefix, s) }

package snapshots

import (
	"crypto/rand"
	"strings"
)

// ID prefixes (section 1: "sn and 12 letters and digits"; section 6: "op and
// 12"). Boxes and threads follow the same shape.
const (
	PrefixSnapshot  = "sn"
	PrefixOperation = "op"
	PrefixBox       = "bx"
	PrefixThread    = "th"
	idLetters       = "abcdefghijklmnopqrstuvwxyz0123456789"
	// IDLength is the number of letters and digits after the prefix.
	IDLength = 12
)

// NewID makes an ID: prefix and 12 lowercase letters and digits.
func NewID(prefix string) string {
	b := make([]byte, IDLength)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	var sb strings.Builder
	sb.WriteString(prefix)
	for _, c := range b {
		// 256 is not a multiple of 36; the bias of c%36 is 1 in 2^8 per
		// letter, harmless for IDs that only need to be unguessable enough.
		sb.WriteByte(idLetters[int(c)%len(idLetters)])
	}
	return sb.String()
}

// ValidID reports whether s is an ID with prefix: the prefix and exactly 12
// lowercase letters and digits.
func ValidID(prefix, s string) bool {
	if len(s) != len(prefix)+IDLength || !strings.HasPrefix(s, prefix) {
		return false
	}
	for _, c := range s[len(prefix):] {
		if !strings.ContainsRune(idLetters, c) {
			return false
		}
	}
	return true
}

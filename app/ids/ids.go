// Package ids makes and checks boxsnap's IDs: a prefix ("sn", "op", "bx",
// "th") and 12 lowercase letters and digits. It imports nothing of boxsnap.
package ids

import (
	"crypto/rand"
	"strings"
)

const (
	letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	// Length is the number of letters and digits after the prefix.
	Length = 12
)

// New makes an ID: prefix and 12 lowercase letters and digits.
func New(prefix string) string {
	b := make([]byte, Length)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	var sb strings.Builder
	sb.WriteString(prefix)
	for _, c := range b {
		// 256 is not a multiple of 36; the bias of c%36 is 1 in 2^8 per
		// letter, harmless for IDs that only need to be unguessable enough.
		sb.WriteByte(letters[int(c)%len(letters)])
	}
	return sb.String()
}

// Valid reports whether s is an ID with prefix: the prefix and exactly 12
// lowercase letters and digits.
func Valid(prefix, s string) bool {
	if len(s) != len(prefix)+Length || !strings.HasPrefix(s, prefix) {
		return false
	}
	for _, c := range s[len(prefix):] {
		if !strings.ContainsRune(letters, c) {
			return false
		}
	}
	return true
}

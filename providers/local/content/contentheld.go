package content

import (
	"encoding/hex"

	"golang.org/x/sys/unix"
)

// ContentHeld answers whether the store holds content h: from the present
// set, else by an fstatat in the content folder (contentDir), remembered when
// found.
func (b *Copier) ContentHeld(contentDir int, h string) bool {
	var k [32]byte
	if len(h) != 64 {
		return false
	}
	if _, err := hex.Decode(k[:], []byte(h)); err != nil {
		return false
	}
	if b.Present.has(k) {
		return true
	}
	var st unix.Stat_t
	if unix.Fstatat(contentDir, h[:2]+"/"+h[2:], &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	b.Present.add(k)
	return true
}

package content

import (
	"encoding/hex"
	"sync"

	"golang.org/x/sys/unix"
)

// stamp is what a content object's stat was when its bytes were last
// known to hash to its name: a write to the object moves its change
// time, which no caller can set back.
type stamp struct {
	dev, ino uint64
	size     int64
	ctime    unix.Timespec
}

// checkedSet remembers, for the content objects this process wrote or
// checked against their names, their stat at that moment, so a shared
// tree's link of an object whose stat has not moved since need not read
// and hash it again. It is bounded as presentSet is. A freed object's
// stamp can never match again (a new file of that name is a new inode
// with a new change time); damage found forgets every stamp.
type checkedSet struct {
	mu   sync.Mutex
	seen map[[32]byte]stamp
}

func stampOf(st *unix.Stat_t) stamp {
	return stamp{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, ctime: st.Ctim}
}

// NoteChecked remembers that the content object named h (a hash in hex),
// stat'ed as st, held the bytes h names when st was taken: the caller
// wrote it or hashed it, and nothing else wrote it since.
func (c *Copier) NoteChecked(h string, st *unix.Stat_t) {
	var k [32]byte
	if len(h) != 64 {
		return
	}
	if _, err := hex.Decode(k[:], []byte(h)); err != nil {
		return
	}
	p := &c.checked
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil || len(p.seen) >= presentMax {
		p.seen = make(map[[32]byte]stamp)
	}
	p.seen[k] = stampOf(st)
}

// Checked says whether the content object named h, stat'ed now as st, is
// the very file NoteChecked last noted for h, unmoved since (the same
// device, inode, size and change time): its bytes are still those h
// names, with no need to read them again.
func (c *Copier) Checked(h string, st *unix.Stat_t) bool {
	var k [32]byte
	if len(h) != 64 {
		return false
	}
	if _, err := hex.Decode(k[:], []byte(h)); err != nil {
		return false
	}
	p := &c.checked
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.seen[k]
	return ok && s == stampOf(st)
}

// ForgetChecked drops every stamp: content was freed or found damaged.
func (c *Copier) ForgetChecked() {
	c.checked.mu.Lock()
	c.checked.seen = nil
	c.checked.mu.Unlock()
}

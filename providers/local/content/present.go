package content

import (
	"encoding/hex"
	"sync"
)

// presentMax bounds how many content names presentSet keeps: about 64 bytes
// each, so at most some 16 MiB however large the store.
const presentMax = 1 << 18

// presentSet remembers the content a take found in the store or copied into
// it, for the next takes, until content is freed: a take checks that every piece of content
// it names by an earlier hash is in the store before it publishes, and this
// spares it a stat for what a take checked since the last free. A free
// (sweepLocked, under the store lock a take holds shared) and damage found
// (markDamaged) forget it all, so a name whose content went is stat'ed
// again, found missing, and its file copied again.
type presentSet struct {
	mu   sync.Mutex
	seen map[[32]byte]struct{}
}

// Forget drops every name: content was freed or found damaged.
func (p *presentSet) Forget() {
	p.mu.Lock()
	p.seen = nil
	p.mu.Unlock()
}

// has says whether h's content was found in the store since the last free.
func (p *presentSet) has(k [32]byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.seen[k]
	return ok
}

// AddHex remembers content h, a hash in hex, as in the store.
func (p *presentSet) AddHex(h string) {
	var k [32]byte
	if len(h) == 64 {
		if _, err := hex.Decode(k[:], []byte(h)); err == nil {
			p.add(k)
		}
	}
}

func (p *presentSet) add(k [32]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil || len(p.seen) >= presentMax {
		p.seen = make(map[[32]byte]struct{})
	}
	p.seen[k] = struct{}{}
}

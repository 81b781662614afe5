package web

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// revealFor is how long a secret made by a post waits for the page that
// shows it once (the redirect's GET).
const revealFor = 5 * time.Minute

// reveal is a secret a post made (a token, a share code) and its words,
// held for the one page that shows it after a post-redirect-get: a reload
// of that page shows it no more and makes nothing again.
type reveal struct {
	Secret, Name, Until string
	Removed             []string
	expires             time.Time
}

// reveals holds reveals by a random ID, in this process only.
type reveals struct {
	mu sync.Mutex
	m  map[string]reveal
}

// hold keeps rv and answers the ID the redirect carries.
func (h *reveals) hold(rv reveal) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	now := time.Now()
	rv.expires = now.Add(revealFor)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]reveal{}
	}
	for k, v := range h.m {
		if now.After(v.expires) {
			delete(h.m, k)
		}
	}
	h.m[id] = rv
	return id
}

// take answers the reveal of id once.
func (h *reveals) take(id string) (reveal, bool) {
	if id == "" {
		return reveal{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rv, ok := h.m[id]
	delete(h.m, id)
	if !ok || time.Now().After(rv.expires) {
		return reveal{}, false
	}
	return rv, true
}

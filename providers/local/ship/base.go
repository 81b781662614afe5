package ship

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// objectsOf lists the objects snapshot m names but its manifest (its
// content, chunks, chunk lists and label), and its manifest.
func (s *Shipper) objectsOf(ctx context.Context, m *store.Manifest) ([]piece, piece, error) {
	pieces, err := s.plan(ctx, m)
	if err != nil {
		return nil, piece{}, err
	}
	manifest := piece{key: s.Remote.Keys.ManifestKey(m.ID), path: filepath.Join(s.SnapDir(m.ID), store.FileManifest)}
	st, err := os.Stat(manifest.path)
	if err != nil {
		return nil, piece{}, err
	}
	manifest.n = st.Size()
	// The label goes with the content: another host lists the snapshot by it.
	label := piece{key: s.Remote.Keys.LabelKey(m.ID), path: filepath.Join(s.SnapDir(m.ID), store.FileLabel)}
	if st, err := os.Stat(label.path); err == nil {
		label.n = st.Size()
		pieces = append(pieces, label)
	}
	return pieces, manifest, nil
}

// baseOf answers the snapshot a take of m names its objects over, and
// every key that base holds: m's parent, when this host shipped it and
// can list its objects; "" otherwise, and the take names all it holds.
// The ledger checks the list against its record of the base before it
// relies on it.
func (s *Shipper) baseOf(ctx context.Context, m *store.Manifest) (string, []string) {
	if s.Remote.Ledger == nil || m.Parent == "" || m.Parent == m.ID || !s.Shipped(m.Parent) {
		return "", nil
	}
	if keys, ok := s.named.get(m.Parent); ok {
		return m.Parent, keys
	}
	bm, err := s.Manifest(m.Parent)
	if err != nil {
		return "", nil
	}
	pieces, manifest, err := s.objectsOf(ctx, bm)
	if err != nil {
		s.Log.Debug("local backend: a take names all it holds: its base's objects could not be listed", "snapshot", m.ID, "base", m.Parent, "err", err)
		return "", nil
	}
	keys := make([]string, 0, len(pieces)+1)
	for _, p := range pieces {
		keys = append(keys, p.key)
	}
	return m.Parent, append(keys, manifest.key)
}

// name names keys in the ledger, over base when there is one; false when
// base was no longer there to name over.
func (s *Shipper) name(ctx context.Context, id, base string, keys, baseKeys []string) (bool, error) {
	l := s.Remote.Ledger
	if l == nil {
		return true, nil
	}
	var ok bool
	var err error
	if base == "" {
		ok, err = true, l.Name(ctx, id, keys)
	} else {
		ok, err = l.NameOver(ctx, id, base, keys, baseKeys)
	}
	if ok && err == nil {
		s.named.put(id, keys)
	}
	return ok, err
}

// keyListsBound bounds the keys keyLists holds in all (about 90 bytes
// each in memory).
const keyListsBound = 400_000

// keyLists is every key of the snapshots named last, oldest first. A list
// is only a take's guess at its base's keys: the ledger checks it against
// its record of the base before relying on it.
type keyLists struct {
	mu    sync.Mutex
	ids   []string
	lists map[string][]string
	n     int
}

func (c *keyLists) get(id string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys, ok := c.lists[id]
	return keys, ok
}

func (c *keyLists) put(id string, keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lists == nil {
		c.lists = map[string][]string{}
	}
	if _, ok := c.lists[id]; ok || len(keys) > keyListsBound {
		return
	}
	for c.n+len(keys) > keyListsBound && len(c.ids) > 0 {
		c.n -= len(c.lists[c.ids[0]])
		delete(c.lists, c.ids[0])
		c.ids = c.ids[1:]
	}
	c.ids = append(c.ids, id)
	c.lists[id] = keys
	c.n += len(keys)
}

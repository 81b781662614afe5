package journal

import (
	"github.com/boxsnap/boxsnap/providers/local/state"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// StatIndex gives what the box's files were last known to hold, by path: the
// stat cache the last restore left, else the last take's manifest, else the
// manifest of the snapshot the box descends from. A source is used only while
// its snapshot is held whole (wholeSnapshot; the caller holds the store lock).
func (b *Reads) StatIndex(st state.BoxState) map[string]*store.Entry {
	if st.StatCache != "" && b.WholeSnapshot(st.StatCache) {
		var m store.Manifest
		if store.ReadChecked(b.StatCacheFile(st.ID), &m) == nil {
			return m.ByPath()
		}
	}
	for _, id := range []string{st.Last, st.Parent} {
		if b.WholeSnapshot(id) {
			if idx, err := b.ManifestIndex(id); err == nil {
				return idx
			}
		}
	}
	return nil
}

// KnownIndex is statIndex of the box's state: what its files were last
// known to hold, by path.
func (b *Reads) KnownIndex(box string) (map[string]*store.Entry, error) {
	st, err := b.ReadState(box)
	if err != nil {
		return nil, err
	}
	return b.StatIndex(st), nil
}

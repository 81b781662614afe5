package store

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// ManifestMagic starts a manifest's body: a compact binary form, because a
// box of 20,000 files gives a manifest that JSON takes tens of milliseconds to
// read and write, which an incremental take of 1% cannot afford. The header
// (everything but the entries) is JSON; each entry's path shares its start
// with the previous one's.
const ManifestMagic = "BXM1"

// Entry flags in the binary form.
const (
	flagHash   = 1 << 0
	flagTarget = 1 << 1
)

// MarshalBinary encodes the manifest (encodeChecked uses it).
func (m *Manifest) MarshalBinary() ([]byte, error) {
	hdr := *m
	hdr.Entries = nil
	h, err := json.Marshal(&hdr)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(h)+len(m.Entries)*80+16)
	out = append(out, ManifestMagic...)
	out = binary.AppendUvarint(out, uint64(len(h)))
	out = append(out, h...)
	out = binary.AppendUvarint(out, uint64(len(m.Entries)))
	prev := ""
	for i := range m.Entries {
		e := &m.Entries[i]
		shared := 0
		for shared < len(prev) && shared < len(e.Path) && prev[shared] == e.Path[shared] {
			shared++
		}
		out = binary.AppendUvarint(out, uint64(shared))
		out = binary.AppendUvarint(out, uint64(len(e.Path)-shared))
		out = append(out, e.Path[shared:]...)
		prev = e.Path
		var flags byte
		if e.Hash != "" {
			flags |= flagHash
		}
		if e.Target != "" {
			flags |= flagTarget
		}
		out = append(out, e.Type[0], flags)
		out = binary.AppendUvarint(out, uint64(e.Mode))
		out = binary.AppendUvarint(out, uint64(e.UID))
		out = binary.AppendUvarint(out, uint64(e.GID))
		out = binary.AppendVarint(out, e.MTime)
		out = binary.AppendVarint(out, e.ATime)
		out = binary.AppendVarint(out, e.Size)
		out = binary.AppendUvarint(out, e.Ino)
		out = binary.AppendVarint(out, e.CTime)
		if flags&flagHash != 0 {
			raw, err := hex.DecodeString(e.Hash)
			if err != nil || len(raw) != 32 {
				return nil, fmt.Errorf("entry %s: bad hash %q", e.Path, e.Hash)
			}
			out = append(out, raw...)
		}
		if flags&flagTarget != 0 {
			out = binary.AppendUvarint(out, uint64(len(e.Target)))
			out = append(out, e.Target...)
		}
	}
	return out, nil
}

var errShort = errors.New("manifest cut short")

// UnmarshalBinary decodes what MarshalBinary wrote.
func (m *Manifest) UnmarshalBinary(data []byte) error {
	if len(data) < len(ManifestMagic) || string(data[:len(ManifestMagic)]) != ManifestMagic {
		return errors.New("not a manifest")
	}
	d := &decoder{p: data[len(ManifestMagic):]}
	hl, err := d.uv()
	if err != nil {
		return err
	}
	h, err := d.take(hl)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(h, m); err != nil {
		return err
	}
	count, err := d.uv()
	if err != nil {
		return err
	}
	if count > uint64(len(d.p)) {
		return errShort
	}
	m.Entries = make([]Entry, count)
	prev := ""
	for i := range m.Entries {
		if err := d.entry(&m.Entries[i], prev); err != nil {
			return err
		}
		prev = m.Entries[i].Path
	}
	if len(d.p) != 0 {
		return errors.New("manifest has trailing bytes")
	}
	return nil
}

// decoder reads a manifest's binary form: p is what is left to read.
type decoder struct {
	p []byte
}

// uv reads an unsigned varint.
func (d *decoder) uv() (uint64, error) {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		return 0, errShort
	}
	d.p = d.p[n:]
	return v, nil
}

// sv reads a signed varint.
func (d *decoder) sv() (int64, error) {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		return 0, errShort
	}
	d.p = d.p[n:]
	return v, nil
}

// take reads n bytes.
func (d *decoder) take(n uint64) ([]byte, error) {
	if uint64(len(d.p)) < n {
		return nil, errShort
	}
	b := d.p[:n]
	d.p = d.p[n:]
	return b, nil
}

// entry reads one entry into e, whose path shares a prefix with prev, the
// path of the entry before it.
func (d *decoder) entry(e *Entry, prev string) error {
	shared, err := d.uv()
	if err != nil {
		return err
	}
	sl, err := d.uv()
	if err != nil {
		return err
	}
	suffix, err := d.take(sl)
	if err != nil {
		return err
	}
	if shared > uint64(len(prev)) {
		return errors.New("manifest path out of order")
	}
	e.Path = prev[:shared] + string(suffix)
	tf, err := d.take(2)
	if err != nil {
		return err
	}
	e.Type = typeName(tf[0])
	flags := tf[1]
	if err := d.stat(e); err != nil {
		return err
	}
	if flags&flagHash != 0 {
		raw, err := d.take(32)
		if err != nil {
			return err
		}
		e.Hash = hex.EncodeToString(raw)
	}
	if flags&flagTarget != 0 {
		tl, err := d.uv()
		if err != nil {
			return err
		}
		t, err := d.take(tl)
		if err != nil {
			return err
		}
		e.Target = string(t)
	}
	return nil
}

// stat reads an entry's stat fields into e: mode, owner, times, size and
// inode.
func (d *decoder) stat(e *Entry) error {
	var u uint64
	var err error
	if u, err = d.uv(); err != nil {
		return err
	}
	e.Mode = uint32(u)
	if u, err = d.uv(); err != nil {
		return err
	}
	e.UID = uint32(u)
	if u, err = d.uv(); err != nil {
		return err
	}
	e.GID = uint32(u)
	if e.MTime, err = d.sv(); err != nil {
		return err
	}
	if e.ATime, err = d.sv(); err != nil {
		return err
	}
	if e.Size, err = d.sv(); err != nil {
		return err
	}
	if e.Ino, err = d.uv(); err != nil {
		return err
	}
	if e.CTime, err = d.sv(); err != nil {
		return err
	}
	return nil
}

func typeName(c byte) string {
	switch c {
	case 'f':
		return TypeFile
	case 'd':
		return TypeDir
	case 'l':
		return TypeLink
	case 'p':
		return TypeFIFO
	}
	return string(c)
}

// manifestCache keeps parsed manifests, each with the stat of its file when
// read: a manifest is never changed once published, and a file whose stat
// changed (damage, a delete) is read again.
type manifestCache struct {
	mu    sync.Mutex
	items map[string]*cachedManifest
	order []string
}

type cachedManifest struct {
	key    StatKey
	m      *Manifest
	byPath map[string]*Entry
}

// ManifestCacheSize is how many manifests the cache holds.
const ManifestCacheSize = 32

// Manifest reads a snapshot's manifest, from the cache when its file has not
// changed. The answer is shared: callers must not change it.
func (b *Store) Manifest(id string) (*Manifest, error) {
	c, err := b.cachedManifest(id)
	if err != nil {
		return nil, err
	}
	return c.m, nil
}

// ManifestIndex is manifest's entries by path.
func (b *Store) ManifestIndex(id string) (map[string]*Entry, error) {
	c, err := b.cachedManifest(id)
	if err != nil {
		return nil, err
	}
	b.Cache.mu.Lock()
	defer b.Cache.mu.Unlock()
	if c.byPath == nil {
		c.byPath = c.m.ByPath()
	}
	return c.byPath, nil
}

func (b *Store) cachedManifest(id string) (*cachedManifest, error) {
	path := b.SnapDir(id) + "/" + FileManifest
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	key := KeyOf(&st)
	b.Cache.mu.Lock()
	if c := b.Cache.items[id]; c != nil && c.key == key {
		b.Cache.mu.Unlock()
		return c, nil
	}
	b.Cache.mu.Unlock()
	m := new(Manifest)
	if err := ReadChecked(path, m); err != nil {
		return nil, err
	}
	c := &cachedManifest{key: key, m: m}
	b.Cache.put(id, c)
	return c, nil
}

// put keeps c as id's manifest, forgetting the oldest beyond
// manifestCacheSize.
func (mc *manifestCache) put(id string, c *cachedManifest) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.items == nil {
		mc.items = make(map[string]*cachedManifest)
	}
	if _, ok := mc.items[id]; !ok {
		mc.order = append(mc.order, id)
	}
	mc.items[id] = c
	for len(mc.order) > ManifestCacheSize {
		delete(mc.items, mc.order[0])
		mc.order = mc.order[1:]
	}
}

// Size is how many manifests the cache holds.
func (mc *manifestCache) Size() int {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return len(mc.items)
}

// Forget drops id's manifest, once its snapshot is deleted.
func (mc *manifestCache) Forget(id string) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if _, ok := mc.items[id]; !ok {
		return
	}
	delete(mc.items, id)
	for i, o := range mc.order {
		if o == id {
			mc.order = append(mc.order[:i], mc.order[i+1:]...)
			break
		}
	}
}

// Remember puts a manifest just published in the cache.
func (b *Store) Remember(id string, m *Manifest) {
	var st unix.Stat_t
	if unix.Stat(b.SnapDir(id)+"/"+FileManifest, &st) != nil {
		return
	}
	b.Cache.put(id, &cachedManifest{key: KeyOf(&st), m: m})
}

// StatCacheFile is where a box's stat cache is kept.
func (b *Store) StatCacheFile(box string) string { return b.Path(DirState, box+".cache") }

// WriteStatCache keeps, after a restore to m, m's entries with the stat of
// each file as the restore left it, so the next take and restore read only
// what changed since.
func (b *Store) WriteStatCache(box string, m *Manifest, keys map[string]StatKey) error {
	c := *m
	c.Entries = make([]Entry, len(m.Entries))
	copy(c.Entries, m.Entries)
	for i := range c.Entries {
		e := &c.Entries[i]
		if e.Type != TypeFile {
			continue
		}
		k, ok := keys[e.Path]
		if !ok {
			e.Hash = "" // unknown now: read again
			continue
		}
		e.Size, e.MTime, e.CTime, e.Ino = k.size, k.mtime, k.ctime, k.ino
	}
	data, err := EncodeChecked(&c)
	if err != nil {
		return err
	}
	return ReplaceFile(b.StatCacheFile(box), data, 0o600)
}

// WholeSnapshot says whether a snapshot is held whole: its manifest is there
// and no delete has begun. It is the one rule for a take's reuse of hashes: a
// take reads a base (a manifest, or the stat cache of a restore to it) only
// while wholeSnapshot holds for its snapshot, under the store lock a delete
// needs exclusive before it frees content, so every hash reused names content
// the store keeps until the take publishes.
func (b *Store) WholeSnapshot(id string) bool {
	if id == "" {
		return false
	}
	if _, err := os.Lstat(b.SnapDir(id) + "/" + FileDeleting); err == nil {
		return false
	}
	_, err := os.Lstat(b.SnapDir(id) + "/" + FileManifest)
	return err == nil
}

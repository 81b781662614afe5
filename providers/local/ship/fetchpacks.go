package ship

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Sink is handed each piece of content a fetch brings whole (every one up
// to ChunkAbove), by its hash, once checked against it, from several
// goroutines at once; b is valid only during the call. An error stops the
// fetch.
type Sink = func(hash string, b []byte) error

// rangeGap is the most a ranged GET reads that nobody wants, between two
// wanted objects of a pack, rather than make a request more.
const rangeGap = 256 << 10

// rangeMost bounds one ranged GET, so a fetch of a few large packs still
// runs several requests at once.
const rangeMost = 8 << 20

// wanted is one object a fetch needs and where its bytes go.
type wanted struct {
	key, sum string
	n        int64
	dests    []dest
}

// dest is where an object's bytes go: the whole of a small content file
// (content; "" for none: only the sink gets it), or a part of a large one
// being put together (f at off).
type dest struct {
	content string
	f       *os.File
	off     int64
}

// unit is one request of a fetch: a range of a pack, or an object whole,
// and the wanted objects it holds from start on, in order.
type unit struct {
	key        string
	start, end int64
	whole      bool
	items      []item
}

type item struct {
	off int64
	w   *wanted
}

// locate answers where each wanted object is: in a pack the ledger
// records, or on its own.
func (s *Shipper) locate(ctx context.Context, wants map[string]*wanted) ([]unit, error) {
	type at struct {
		pack         string
		off, n, size int64
	}
	where := map[string]at{}
	if pl := s.packLedger(); pl != nil {
		keys := make([]string, 0, len(wants))
		for k := range wants {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		err := pl.Locate(ctx, keys, func(key, pack string, off, n, size int64) {
			where[key] = at{pack, off, n, size}
		})
		if err != nil {
			return nil, err
		}
	}
	byPack := map[string][]item{}
	sizes := map[string]int64{}
	var units []unit
	for k, w := range wants {
		a, ok := where[k]
		if !ok || a.n != w.n {
			units = append(units, unit{key: k, whole: true, end: w.n, items: []item{{0, w}}})
			continue
		}
		byPack[a.pack] = append(byPack[a.pack], item{a.off, w})
		sizes[a.pack] = a.size
	}
	for p, items := range byPack {
		units = append(units, ranges(p, sizes[p], items)...)
	}
	sort.Slice(units, func(i, j int) bool {
		if units[i].key != units[j].key {
			return units[i].key < units[j].key
		}
		return units[i].start < units[j].start
	})
	return units, nil
}

// ranges cuts the wanted items of a pack into ranged GETs: neighbours
// read together across gaps up to rangeGap (any gap when most of the
// pack is wanted: one read of it beats several), each at most rangeMost.
func ranges(pack string, size int64, items []item) []unit {
	sort.Slice(items, func(i, j int) bool { return items[i].off < items[j].off })
	var want int64
	for _, it := range items {
		want += it.w.n
	}
	gap := int64(rangeGap)
	if 2*want >= size {
		gap = size
	}
	var out []unit
	for _, it := range items {
		end := it.off + it.w.n
		if n := len(out); n > 0 && it.off-out[n-1].end <= gap && end-out[n-1].start <= rangeMost {
			if end > out[n-1].end {
				out[n-1].end = end
			}
			out[n-1].items = append(out[n-1].items, it)
			continue
		}
		out = append(out, unit{key: pack, start: it.off, end: end, items: []item{it}})
	}
	return out
}

// fetchUnit makes u's request and hands each object it holds, checked
// against its hash, to its destinations.
func (s *Shipper) fetchUnit(ctx context.Context, u unit, sink Sink) error {
	sp := &splitter{u: u, pos: u.start, keys: s.Remote.Keys, tmpDir: s.Path(store.DirTmp), sink: sink, note: s.NoteChecked}
	var err error
	if rg, ok := s.Remote.Objects.(objstore.RangeGetter); ok && !u.whole {
		err = rg.GetRange(ctx, u.key, u.start, u.end-u.start, sp)
	} else {
		sp.pos = 0
		err = s.Remote.Objects.Get(ctx, u.key, "", sp)
	}
	if err != nil {
		return err
	}
	if sp.next < len(u.items) {
		// The object or range ended before the objects the ledger says it holds.
		return objstore.Corrupt(s.Remote.Keys, u.key)
	}
	return nil
}

// splitter cuts a request's bytes into the objects of its unit, checks
// each by its SHA-256 and delivers it.
type splitter struct {
	u    unit
	keys objstore.Config
	// tmpDir is where a content file is written before its rename.
	tmpDir string
	// sink is handed each whole content checked (FetchTo); nil: none.
	sink Sink
	// note is told the stat of each content file written (Shipper.NoteChecked).
	note func(hash string, st *unix.Stat_t)
	pos  int64
	next int
	buf  []byte
}

func (sp *splitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && sp.next < len(sp.u.items) {
		it := sp.u.items[sp.next]
		if sp.pos < it.off {
			skip := min(it.off-sp.pos, int64(len(p)))
			p, sp.pos = p[skip:], sp.pos+skip
			continue
		}
		if sp.pos > it.off { // an object inside the one before (never so in a pack)
			return 0, objstore.Corrupt(sp.keys, sp.u.key)
		}
		take := min(it.w.n-int64(len(sp.buf)), int64(len(p)))
		sp.buf = append(sp.buf, p[:take]...)
		p = p[take:]
		if int64(len(sp.buf)) < it.w.n {
			continue
		}
		if err := it.w.deliver(sp.keys, sp.tmpDir, sp.buf, sp.sink, sp.note); err != nil {
			return 0, err
		}
		sp.buf, sp.pos, sp.next = sp.buf[:0], it.off+it.w.n, sp.next+1
	}
	return n, nil
}

// deliver checks b against the object's hash, then writes it where it
// goes: a small content file whole, read-only (when its dest names one;
// note, when set, is told its stat), or its place in a large one; a
// small content file is handed to sink too.
func (w *wanted) deliver(keys objstore.Config, tmpDir string, b []byte, sink Sink, note func(string, *unix.Stat_t)) error {
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != w.sum {
		return objstore.Corrupt(keys, w.key)
	}
	for _, d := range w.dests {
		if d.f != nil {
			if _, err := d.f.WriteAt(b, d.off); err != nil {
				return err
			}
			continue
		}
		if d.content != "" {
			if err := d.write(tmpDir, w.sum, b, note); err != nil {
				return err
			}
		}
		if sink != nil {
			if err := sink(w.sum, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// write puts b, checked against hash, in the host's content as file
// d.content, through a file in tmpDir (where the cache's eviction never
// looks): an unnamed one where the file system makes them, else a named
// one renamed. note, when set, is told the stat of the file it named.
func (d dest) write(tmpDir, hash string, b []byte, note func(string, *unix.Stat_t)) error {
	path := d.content
	if done, err := writeUnnamed(tmpDir, path, b, hash, note); done {
		return err
	}
	f, err := os.CreateTemp(tmpDir, "fetch-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o444)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		// Stat'ed by its own descriptor once named: a rename moves a
		// file's change time.
		noteOpen(f, hash, note)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// large is a large content file being put together from its chunks.
type large struct {
	h    string
	size int64
	f    *os.File
	list []byte
}

// fetchLists fetches the chunk list of each large content in hs (several
// at once), opens a file for each to be put together in, and adds its
// chunks to wants.
func (s *Shipper) fetchLists(ctx context.Context, hs []string, need map[string]int64, wants map[string]*wanted) ([]*large, error) {
	out := make([]*large, len(hs))
	keys := s.Remote.Keys
	err := each(ctx, max(s.Workers, shipWorkers), len(hs), func(ctx context.Context, i int) error {
		var list bytes.Buffer
		if err := s.Remote.Objects.Get(ctx, keys.ListKey(hs[i]), "", &list); err != nil {
			return err
		}
		out[i] = &large{h: hs[i], size: need[hs[i]], list: list.Bytes()}
		return nil
	})
	for _, l := range out {
		if err != nil || l == nil {
			break
		}
		chunks, perr := parseList(l.list)
		if perr != nil {
			return out, objstore.Corrupt(keys, keys.ListKey(l.h))
		}
		if l.f, err = os.CreateTemp(s.Path(store.DirTmp), "fetch-"); err != nil {
			return out, err
		}
		for _, c := range chunks {
			add(wants, keys.ContentKey(c.sum), c.sum, c.len, dest{f: l.f, off: c.off})
		}
	}
	return out, err
}

func add(wants map[string]*wanted, key, sum string, n int64, d dest) {
	w := wants[key]
	if w == nil {
		w = &wanted{key: key, sum: sum, n: n}
		wants[key] = w
	}
	w.dests = append(w.dests, d)
}

// fetchMissing fetches the content missing (hashes of need) from the
// bucket: chunk lists first, then every object, grouped by pack into
// ranged GETs, several at once, each object checked by its hash, and each
// large file checked whole before it joins the host's content; a small
// piece joins it only with keep (else sink alone gets it).
func (s *Shipper) fetchMissing(ctx context.Context, missing []string, need map[string]int64, sink Sink, keep bool) error {
	start := time.Now()
	wants := map[string]*wanted{}
	var largeOnes []string
	for _, h := range missing {
		if need[h] > ChunkAbove {
			largeOnes = append(largeOnes, h)
			continue
		}
		d := dest{}
		if keep {
			d.content = s.ContentPath(h)
		}
		add(wants, s.Remote.Keys.ContentKey(h), h, need[h], d)
	}
	larges, err := s.fetchLists(ctx, largeOnes, need, wants)
	defer func() {
		for _, l := range larges {
			if l != nil && l.f != nil {
				_ = l.f.Close()
				_ = os.Remove(l.f.Name())
			}
		}
	}()
	if err != nil {
		return err
	}
	// An empty object needs no request (and would share its offset in a
	// pack with the object after it).
	for k, w := range wants {
		if w.n == 0 {
			if err := w.deliver(s.Remote.Keys, s.Path(store.DirTmp), nil, sink, s.NoteChecked); err != nil {
				return err
			}
			delete(wants, k)
		}
	}
	units, err := s.locate(ctx, wants)
	if err != nil {
		return err
	}
	err = each(ctx, max(s.Workers, shipWorkers), len(units), func(ctx context.Context, i int) error {
		return s.fetchUnit(ctx, units[i], sink)
	})
	if err != nil {
		return err
	}
	got := time.Now()
	for _, l := range larges {
		if err := s.joinLarge(l); err != nil {
			return err
		}
	}
	s.Log.Debug("content store: fetched", "objects", len(wants), "requests", len(units), "large", len(larges),
		"fetch", got.Sub(start), "join", time.Since(got))
	return nil
}

// joinLarge checks a large file put together whole against its hash and
// size, and renames it into the host's content, read-only.
func (s *Shipper) joinLarge(l *large) error {
	if _, err := l.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	sum := sha256.New()
	n, err := io.Copy(sum, l.f)
	if err != nil {
		return err
	}
	if hex.EncodeToString(sum.Sum(nil)) != l.h || n != l.size {
		return objstore.Corrupt(s.Remote.Keys, s.Remote.Keys.ListKey(l.h))
	}
	if err := l.f.Chmod(0o444); err != nil {
		return err
	}
	if err := os.Rename(l.f.Name(), s.ContentPath(l.h)); err != nil {
		return err
	}
	noteOpen(l.f, l.h, s.NoteChecked)
	if err := os.MkdirAll(s.Path(DirLists), 0o700); err == nil {
		_ = store.WriteFileAtomic(s.Path(DirLists, l.h), l.list, 0o600)
	}
	return nil
}

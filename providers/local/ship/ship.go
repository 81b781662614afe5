package ship

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// shipWorkers is how many objects are put or fetched at once at least:
// each waits on the server's answer far more than on this host's disk.
const shipWorkers = 16

// FileShipped is present in a snapshot's folder once its manifest and
// every object it names are in the bucket and named in the ledger: a take
// that finds it ships nothing again.
const FileShipped = "shipped"

// Ledger records what is in the bucket and which snapshot names which
// object. A claim keeps a key from the sweep for a while (the ledger's
// grace), so a take may ask whether an object is there and rely on the
// answer until it names it.
type Ledger interface {
	// Claim claims keys for a take about to ship them, and answers those
	// recorded as stored in the bucket (which stay there while claimed).
	Claim(ctx context.Context, keys []string) (stored map[string]bool, err error)
	// Stored records that keys are now in the bucket.
	Stored(ctx context.Context, keys []string) error
	// Name records that snapshot names keys; it fails when one of them is
	// no longer recorded (a sweep freed it), so no snapshot names an
	// object the bucket lacks.
	Name(ctx context.Context, snapshot string, keys []string) error
	// NameOver records that snapshot holds keys as Name does, recording
	// only how they differ from baseKeys, all that base holds; it answers
	// false, recording nothing, when base is no longer recorded (deleted
	// meanwhile) or holds other keys.
	NameOver(ctx context.Context, snapshot, base string, keys, baseKeys []string) (bool, error)
	// Unname records that snapshot names nothing any more.
	Unname(ctx context.Context, snapshot string) error
}

// Remote is the content store a Shipper ships to.
type Remote struct {
	Objects objstore.Objects
	Keys    objstore.Config
	// Ledger records the bucket's objects; nil asks the bucket with a head
	// before each put, and records nothing (a sweep then frees nothing).
	Ledger Ledger
	// Singles puts every object on its own even when the Ledger records
	// packs (PackLedger): the layout before packs.
	Singles bool
}

// Shipper ships snapshots to a Remote and fetches their content back.
type Shipper struct {
	*store.Store
	Remote  *Remote // nil: no content store, Ship and Fetch do nothing
	Log     *slog.Logger
	Workers int
	// CacheBytes bounds the content kept on this host (Evict); 0 keeps
	// it all.
	CacheBytes int64
	// NoteChecked, when set, is told the stat of each content file a
	// fetch wrote into the host's content from bytes it checked against
	// their hash (content.Copier.NoteChecked), so a restore or a shared
	// tree that reads it next need not hash it again while its stat is
	// unmoved.
	NoteChecked func(hash string, st *unix.Stat_t)
	// named remembers the keys of the snapshots this process named last,
	// so the next take of a box need not list its base's again.
	named keyLists
}

// piece is one object a snapshot names and where its bytes are on this
// host: a part of a file (path, or the content file whose hash is from),
// or a list's bytes.
type piece struct {
	key    string
	path   string
	from   string
	off, n int64
	data   []byte
}

// reader reads p's bytes.
func (s *Shipper) reader(p piece) (io.ReadCloser, error) {
	if p.data != nil {
		return io.NopCloser(bytes.NewReader(p.data)), nil
	}
	path := p.path
	if p.from != "" {
		path = s.ContentPath(p.from)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, p.off, p.n), f}, nil
}

// Shipped says whether snapshot id is wholly in the bucket.
func (s *Shipper) Shipped(id string) bool {
	_, err := os.Stat(filepath.Join(s.SnapDir(id), FileShipped))
	return err == nil
}

// Ship puts the content snapshot id names, then its manifest, in the
// bucket, then names them in the ledger and marks the snapshot shipped.
// Each object is put once: one the ledger records as stored (or, with no
// ledger, that a head finds) is not put again, so a take killed half way
// resumes from where it got to.
func (s *Shipper) Ship(ctx context.Context, id string) error {
	if s == nil || s.Remote == nil || s.Shipped(id) {
		return nil
	}
	m, err := s.Manifest(id)
	if err == nil {
		err = s.ship(ctx, m)
	}
	if err != nil {
		return fmt.Errorf(shipFailedWords, id, err)
	}
	return nil
}

func (s *Shipper) ship(ctx context.Context, m *store.Manifest) error {
	start := time.Now()
	pieces, manifest, err := s.objectsOf(ctx, m)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(pieces)+1)
	for _, p := range pieces {
		keys = append(keys, p.key)
	}
	keys = append(keys, manifest.key)
	// Sorted once here, the ledger need not sort them (nor, kept for the
	// next take, its base's) again.
	slices.Sort(keys)
	planned := time.Now()
	base, baseKeys := s.baseOf(ctx, m)
	return s.shipOver(ctx, m, pieces, manifest, keys, base, baseKeys, planned.Sub(start), time.Since(planned))
}

// shipOver ships m's pieces and manifest, and names keys, all it holds,
// in the ledger over base, which holds baseKeys (none when base is "").
// The keys base holds are neither claimed nor put: base's names keep them
// in the bucket while base lives, and the naming fails over to all of
// them when base was deleted meanwhile.
func (s *Shipper) shipOver(ctx context.Context, m *store.Manifest, pieces []piece, manifest piece, keys []string,
	base string, baseKeys []string, planTime, baseTime time.Duration) error {
	start := time.Now()
	fresh := keys
	if len(baseKeys) > 0 {
		fresh = without(keys, baseKeys)
	}
	var stored map[string]bool
	var err error
	if l := s.Remote.Ledger; l != nil {
		if stored, err = l.Claim(ctx, fresh); err != nil {
			return err
		}
	}
	todo := piecesOf(pieces, fresh, len(fresh) < len(keys), stored)
	claimed := time.Now()
	todo, packs, err := s.shipPacks(ctx, todo)
	if err != nil {
		return err
	}
	put, err := s.putAll(ctx, todo)
	if err != nil {
		return err
	}
	if err := s.record(ctx, put); err != nil {
		return err
	}
	// The manifest goes last: one in the bucket names only objects that are.
	if !stored[manifest.key] {
		if err := s.putOne(ctx, manifest); err != nil {
			return err
		}
		if err := s.record(ctx, []string{manifest.key}); err != nil {
			return err
		}
	}
	shipped := time.Now()
	if named, err := s.name(ctx, m.ID, base, keys, baseKeys); err != nil {
		return err
	} else if !named {
		s.Log.Info("local backend: a take's base left the content store's ledger while it shipped; it names all it holds", "snapshot", m.ID, "base", base)
		return s.shipOver(ctx, m, pieces, manifest, keys, "", nil, planTime, baseTime)
	}
	s.Log.Debug("local backend: snapshot shipped", "snapshot", m.ID, "objects", len(keys), "base", base, "claimed", len(fresh), "put", len(put), "packs", packs,
		"plan", planTime, "baseKeys", baseTime, "claim", claimed.Sub(start), "puts", shipped.Sub(claimed), "name", time.Since(shipped))
	if err := store.WriteFileAtomic(filepath.Join(s.SnapDir(m.ID), FileShipped), []byte(manifest.key+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(s.SnapDir(m.ID), store.FileUnshipped)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// without is the keys of keys that base lacks, in one pass of
// both: an incremental take's keys are mostly its base's, and a map of
// them all would cost more than the rest of its shipping.
func without(keys, base []string) []string {
	if !slices.IsSorted(keys) {
		keys = slices.Sorted(slices.Values(keys))
	}
	if !slices.IsSorted(base) {
		base = slices.Sorted(slices.Values(base))
	}
	var out []string
	j := 0
	for _, k := range keys {
		for j < len(base) && base[j] < k {
			j++
		}
		if j == len(base) || base[j] != k {
			out = append(out, k)
		}
	}
	return out
}

// piecesOf is the pieces to put: those whose key is in fresh (all of them
// when not some) and not stored.
func piecesOf(pieces []piece, fresh []string, some bool, stored map[string]bool) []piece {
	var in map[string]bool
	if some {
		in = make(map[string]bool, len(fresh))
		for _, k := range fresh {
			in[k] = true
		}
	}
	var todo []piece
	for _, p := range pieces {
		if (!some || in[p.key]) && !stored[p.key] {
			todo = append(todo, p)
		}
	}
	return todo
}

func (s *Shipper) record(ctx context.Context, keys []string) error {
	if l := s.Remote.Ledger; l != nil && len(keys) > 0 {
		return l.Stored(ctx, keys)
	}
	return nil
}

// putAll puts pieces from several workers and answers the keys it put.
func (s *Shipper) putAll(ctx context.Context, pieces []piece) ([]string, error) {
	workers := max(s.Workers, shipWorkers)
	ch := make(chan piece)
	var mu sync.Mutex
	var put []string
	var first error
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Go(func() {
			for p := range ch {
				err := s.putOne(ctx, p)
				mu.Lock()
				if err != nil && first == nil {
					first = err
					cancel()
				} else if err == nil {
					put = append(put, p.key)
				}
				mu.Unlock()
			}
		})
	}
	for _, p := range pieces {
		select {
		case ch <- p:
		case <-ctx.Done():
		}
	}
	close(ch)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	sort.Strings(put)
	return put, first
}

// putOne puts p, unless there is no ledger and a head finds it there.
func (s *Shipper) putOne(ctx context.Context, p piece) error {
	if s.Remote.Ledger == nil {
		if _, ok, err := s.Remote.Objects.Head(ctx, p.key); err != nil || ok {
			return err
		}
	}
	r, err := s.reader(p)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	n := p.n
	if p.data != nil {
		n = int64(len(p.data))
	}
	return s.Remote.Objects.Put(ctx, p.key, r, n)
}

// Unname records that a deleted snapshot names nothing any more; its
// objects go at the next sweep that finds nothing else names them.
func (s *Shipper) Unname(ctx context.Context, id string) error {
	if s == nil || s.Remote == nil || s.Remote.Ledger == nil {
		return nil
	}
	return s.Remote.Ledger.Unname(ctx, id)
}

// ErrNoContentStore is Fetch's answer for content the host lacks when
// there is no content store to fetch it from.
var ErrNoContentStore = errors.New("no content store is set")

package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"golang.org/x/sys/unix"

	"github.com/boxsnap/boxsnap/providers"
)

// The store's layout under the backend's root (see doc.go).
const (
	DirBoxes     = "boxes"
	DirState     = "state"
	DirSnapshots = "snapshots"
	DirContent   = "content"
	DirTmp       = "tmp"
	DirGroups    = "groups"
	fileLock     = "store.lock"
	FileRates    = "rates.json"
	// FileCacheCount records the content cache's last count and when
	// (package ship's Evict), for Settings' Hosts page.
	FileCacheCount = "cache-count.json"

	FileManifest = "manifest.json"
	FileLabel    = "label.json"
	// FileDeleting marks a snapshot whose delete has started; a snapshot
	// with it is incomplete until a delete finishes.
	FileDeleting = "deleting"
	// FileDamaged records damage a restore or a check found in its content.
	FileDamaged = "damaged"

	// TakingPrefix names a snapshot folder still being written; it is never
	// listed, and a sweep removes it once no take runs.
	TakingPrefix = ".taking-"
	// FetchingPrefix names a snapshot's manifest and label being fetched
	// from the content store (ship's FetchSnapshot), which runs under no
	// store lock, as any read may fetch one: it is never listed, and a
	// sweep removes it only once it is FetchLeftAge old.
	FetchingPrefix = ".fetching-"
	// FetchLeftAge is the age past which a fetch's folder is one a
	// stopped process left: a fetch writes two small files.
	FetchLeftAge = 10 * time.Minute
	// ChecksumPrefix starts the first line of every manifest and label.
	ChecksumPrefix = "boxsnap-sha256 "
)

// validID is what a box ID, a snapshot ID and a group name may be: they name
// folders, so no slash, no dot first.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Store is the backend's store under its root (see doc.go): its folders
// and files by name, its lock, and the snapshots' manifests, read through
// a cache.
type Store struct {
	root  string
	Cache manifestCache
	// Fetch brings content this host lacks from the content store (hash
	// to size), each object checked; nil where there is none
	// (EnsureContent).
	Fetch func(ctx context.Context, need map[string]int64) error
	// FetchSnapshot brings a snapshot this host does not hold (its
	// manifest and label) from the content store; nil where there is none
	// (LoadUsable).
	FetchSnapshot func(ctx context.Context, id string) error
}

// NewStore is the store under root, an absolute path; it makes no folder.
func NewStore(root string) *Store { return &Store{root: root} }

func CheckID(what, id string) error {
	if !validID.MatchString(id) {
		return &providers.RefusedError{Why: fmt.Sprintf("%s %q is not a valid ID: letters, digits, - and _ only, at most 64", what, id)}
	}
	return nil
}

func (b *Store) Path(parts ...string) string {
	return filepath.Join(append([]string{b.root}, parts...)...)
}

func (b *Store) BoxDir(id string) string      { return b.Path(DirBoxes, id) }
func (b *Store) SnapDir(id string) string     { return b.Path(DirSnapshots, id) }
func (b *Store) ContentPath(h string) string  { return b.Path(DirContent, h[:2], h[2:]) }
func (b *Store) StateFile(box string) string  { return b.Path(DirState, box+".json") }
func (b *Store) GroupFile(name string) string { return b.Path(DirGroups, name+".json") }

// RandomSuffix gives a short random word for temporary names.
func RandomSuffix() string {
	var p [8]byte
	_, _ = rand.Read(p[:])
	return hex.EncodeToString(p[:])
}

// NewSnapshotID makes an ID in boxsnap's form, "sn" and 12 letters and
// digits, for a take that was given none (tests and benchmarks).
func NewSnapshotID() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	var p [12]byte
	_, _ = rand.Read(p[:])
	out := []byte("sn")
	for _, c := range p {
		out = append(out, letters[int(c)%len(letters)])
	}
	return string(out)
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder, synced, then renamed, then the folder synced: a reader sees the old
// file or the new one, never half of one.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	return SyncDir(dir)
}

// ReplaceFile writes data to path through a temporary file and a rename,
// with no fsync: for small state a crash may lose (a box's last take, the
// measured rates), never half-write.
func ReplaceFile(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp-" + RandomSuffix()
	if err := os.WriteFile(tmp, data, mode); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// SyncDir fsyncs the folder (or the file) at dir.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// SyncFS makes one syncfs of the file system that holds path: what waits
// to be written on it, whoever wrote it, is on disk when it returns; one
// call, not an fsync of each file.
func SyncFS(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", path, err)
	}
	return nil
}

// EncodeChecked gives v as JSON after a first line holding the JSON's
// SHA-256, so that damage on disk is found when it is read.
func EncodeChecked(v any) ([]byte, error) {
	var body []byte
	var err error
	if bm, ok := v.(encoding.BinaryMarshaler); ok {
		body, err = bm.MarshalBinary()
	} else {
		body, err = json.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	out := make([]byte, 0, len(body)+len(ChecksumPrefix)+66)
	out = append(out, ChecksumPrefix...)
	out = append(out, hex.EncodeToString(sum[:])...)
	out = append(out, '\n')
	out = append(out, body...)
	return out, nil
}

// ErrDamaged marks a manifest, label or content file whose checksum does not
// match what it holds.
var ErrDamaged = errors.New("damaged on disk: its checksum does not match")

// ReadChecked reads a file written by encodeChecked into v, checking its sum.
func ReadChecked(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	body, err := CheckedBody(data, filepath.Base(path))
	if err != nil {
		return err
	}
	return DecodeBody(body, v, filepath.Base(path))
}

// CheckedBody is what data, written by encodeChecked, holds after its
// checksum line, once the checksum is found to match; name is for errors.
func CheckedBody(data []byte, name string) ([]byte, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 || !bytes.HasPrefix(data, []byte(ChecksumPrefix)) {
		return nil, fmt.Errorf("%s: %w (no checksum line)", name, ErrDamaged)
	}
	want := string(data[len(ChecksumPrefix):nl])
	body := data[nl+1:]
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != want {
		return nil, fmt.Errorf("%s: %w", name, ErrDamaged)
	}
	return body, nil
}

// DecodeBody reads a body checkedBody gave into v.
func DecodeBody(body []byte, v any, name string) error {
	if bu, ok := v.(encoding.BinaryUnmarshaler); ok {
		if err := bu.UnmarshalBinary(body); err != nil {
			return fmt.Errorf("%s: %w (%v)", name, ErrDamaged, err)
		}
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w (%v)", name, ErrDamaged, err)
	}
	return nil
}

// storeLock is a flock on the store's lock file. Takes hold it shared for
// their whole run; a sweep that deletes content holds it exclusive, so it
// never deletes content a take is about to publish.
type storeLock struct{ f *os.File }

// lockPoll is how often a waiting lock tries again; flock cannot be
// interrupted by a context, so the wait polls a non-blocking attempt.
const lockPoll = 5 * time.Millisecond

func (b *Store) LockStore(ctx context.Context, exclusive bool) (*storeLock, error) {
	f, err := os.OpenFile(b.Path(fileLock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the store: %w", err)
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return &storeLock{f: f}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock the store: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock the store: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

func (l *storeLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

// Sha256Hex is the hex SHA-256 of data.
func Sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// SnapID is the folder of a snapshot: its backend reference, or its ID.
func SnapID(ref providers.SnapshotRef) string {
	if ref.Ref != "" {
		return ref.Ref
	}
	return ref.ID
}

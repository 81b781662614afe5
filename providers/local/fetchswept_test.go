package local

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/ship"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// sweepingObjects is the bucket, but the first get of key runs sweep
// first: a sweep of another process on the same data folder coming while
// a read fetches a snapshot's records. Every other call is the bucket's.
type sweepingObjects struct {
	objstore.Objects
	key   string
	once  sync.Once
	sweep func()
}

func (s *sweepingObjects) Get(ctx context.Context, key, sum string, w io.Writer) error {
	if key == s.key {
		s.once.Do(s.sweep)
	}
	return s.Objects.Get(ctx, key, sum, w)
}

// TestASweepLeavesAFetchUnderWay: a read on another host of a snapshot
// taken here fetches its manifest and label from the bucket holding no
// store lock (any read may), so a sweep coming meanwhile (at another
// process's start on the same data folder) takes the lock and removes
// what takes left: it must leave the fetch's folder, and the read goes on
// to the file's bytes. A fetch's folder a stopped process left, older
// than store.FetchLeftAge, is removed. On the old code the fetch wrote in
// a take's folder (.taking-…-fetch-…), the sweep removed it, and the read
// failed ("no such file or directory").
func TestASweepLeavesAFetchUnderWay(t *testing.T) {
	e, _, bucket := setupStored(t)
	e.write(t, "notes.txt", "at the take")
	_, ref := e.take(t)

	objs := &sweepingObjects{Objects: bucket, key: bucket.Config().ManifestKey(ref.Ref)}
	other, err := New(Config{Root: t.TempDir(), Install: "in-test", NoSync: true, StopTimeout: 2 * time.Second,
		ContentStore: &ship.Remote{Objects: objs, Keys: bucket.Config()}})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, other)
	left := other.Path(store.DirSnapshots, store.FetchingPrefix+"snleftbehind00-abc")
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-store.FetchLeftAge - time.Minute)
	if err := os.Chtimes(left, old, old); err != nil {
		t.Fatal(err)
	}
	var swept []string
	objs.sweep = func() {
		entries, _ := os.ReadDir(other.Path(store.DirSnapshots))
		for _, d := range entries {
			if strings.HasPrefix(d.Name(), ".") {
				swept = append(swept, d.Name())
			}
		}
		if _, err := other.Sweep(e.ctx); err != nil {
			t.Errorf("the sweep: %v", err)
		}
	}
	var got bytes.Buffer
	if _, err := other.ReadFile(e.ctx, ref, "notes.txt", &got); err != nil || got.String() != "at the take" {
		t.Fatalf("a read whose fetch a sweep came into read %q: %v", got.String(), err)
	}
	if len(swept) != 2 {
		t.Fatalf("when the sweep came the snapshots' folder held %v; want the fetch's folder and the one left behind", swept)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("a fetch's folder left %v ago is still there after the sweep (%v)", store.FetchLeftAge+time.Minute, err)
	}
	if _, err := os.Stat(filepath.Join(other.Path(store.DirSnapshots), ref.Ref)); err != nil {
		t.Errorf("the fetched snapshot's records are not in place: %v", err)
	}
}

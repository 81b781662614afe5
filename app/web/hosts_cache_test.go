package web

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// TestHostsPageSaysTheCache: with a content store, Settings' Hosts says
// this host's content cache's bound (by default a quarter of its file
// system) and how full it is; with none, it says nothing of a cache.
func TestHostsPageSaysTheCache(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	bucket, err := objstore.Open(srv.Bucket(t))
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, coretest.Options{ContentStore: &ship.Remote{Objects: bucket, Keys: bucket.Config()}})
	s.env.Box(t, snapshots.Owner(), "amber-fox")
	s.env.TakeReady(t, snapshots.Owner(), "amber-fox", "one")
	page := s.do(t, "GET", "/settings/hosts", nil, nil).Body.String()
	for _, want := range []string{"<p>This host&#39;s content cache ", " bound of ", "(25% of the ", "BOXSNAP_CONTENT_CACHE_SIZE)"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the Hosts page with a content store lacks %q:\n%s", want, page)
		}
	}
	plain := newSite(t, coretest.Options{})
	if page := plain.do(t, "GET", "/settings/hosts", nil, nil).Body.String(); strings.Contains(page, "content cache") {
		t.Fatalf("the Hosts page with no content store speaks of a content cache:\n%s", page)
	}
}

// TestHostsPageCountsTheCacheOnce: with the cache's bound under what its
// file system holds (so the file system cannot answer for it), the Hosts
// page says what the cache held as the last take's end counted it, right
// after the take (the doctor's count, made then, agrees), and with when;
// a file put in the cache behind boxsnap's back changes nothing on the
// page until the next take counts it, so a view never counts the cache.
// On the old code the page counted the cache at each view, saying the
// file at once, and said no when.
func TestHostsPageCountsTheCacheOnce(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	bucket, err := objstore.Open(srv.Bucket(t))
	if err != nil {
		t.Fatal(err)
	}
	const bound = 8 << 20
	s := newSite(t, coretest.Options{ContentStore: &ship.Remote{Objects: bucket, Keys: bucket.Config()}, ContentCacheBytes: bound})
	root := s.env.Local.Root()
	if used, ok := ship.FileSystemUsed(root); !ok || used <= bound {
		t.Fatalf("the file system holding %s holds %d bytes; the test needs more than the bound, %d", root, used, bound)
	}
	box := s.env.Box(t, snapshots.Owner(), "amber-fox")
	dir := s.env.Local.BoxDir(providers.Guest{Backend: "local", Kind: box.Kind, Ref: box.GuestRef})
	write := func(path string, n int) {
		t.Helper()
		b := make([]byte, n)
		_, _ = rand.Read(b)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	held := regexp.MustCompile(`This host&#39;s content cache held ([0-9.]+ [KMG]iB|[0-9]+ bytes) of its bound of 8 MiB \(BOXSNAP_CONTENT_CACHE_SIZE\), [0-9]+% full, when last counted [0-9]+ seconds ago;`)
	figure := func(when string) string {
		t.Helper()
		page := s.do(t, "GET", "/settings/hosts", nil, nil).Body.String()
		m := held.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("%s the Hosts page does not say what the cache held when last counted:\n%s", when, page)
		}
		return m[1]
	}
	counted := func() string {
		t.Helper()
		u, err := local.CacheUse(root, bound, 0)
		if err != nil {
			t.Fatal(err)
		}
		return snapshots.BinarySize(u.Held)
	}
	write(filepath.Join(dir, "one.bin"), 1<<20)
	s.env.TakeReady(t, snapshots.Owner(), "amber-fox", "one")
	first := figure("after the first take")
	if want := counted(); first != want {
		t.Fatalf("after the first take the page says the cache held %s; counted now it holds %s", first, want)
	}
	// 2 MiB in the cache behind boxsnap's back: a count sees it, a view
	// does not count.
	write(filepath.Join(root, "content", "ff", strings.Repeat("e", 62)), 2<<20)
	if now := counted(); now == first {
		t.Fatalf("the file put in the cache changes no count: %s", now)
	}
	if again := figure("after a file was put in the cache"); again != first {
		t.Fatalf("a view of the page counted the cache: it says %s, the take's count was %s", again, first)
	}
	write(filepath.Join(dir, "two.bin"), 1<<20)
	s.env.TakeReady(t, snapshots.Owner(), "amber-fox", "two")
	second := figure("after the second take")
	if want := counted(); second != want || second == first {
		t.Fatalf("after the second take the page says the cache held %s (%s after the first); counted now it holds %s", second, first, want)
	}
}

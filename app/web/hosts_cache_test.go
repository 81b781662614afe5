package web

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
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
	for _, want := range []string{"<p>This host&#39;s content cache holds ", " of its bound of ", "(25% of the ", "BOXSNAP_CONTENT_CACHE_SIZE), "} {
		if !strings.Contains(page, want) {
			t.Fatalf("the Hosts page with a content store lacks %q:\n%s", want, page)
		}
	}
	plain := newSite(t, coretest.Options{})
	if page := plain.do(t, "GET", "/settings/hosts", nil, nil).Body.String(); strings.Contains(page, "content cache") {
		t.Fatalf("the Hosts page with no content store speaks of a content cache:\n%s", page)
	}
}

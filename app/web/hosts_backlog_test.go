package web

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/hosts"
	"github.com/boxsnap/boxsnap/providers/local/objstore"
	"github.com/boxsnap/boxsnap/providers/local/objstore/s3test"
	"github.com/boxsnap/boxsnap/providers/local/ship"
)

// TestHostsPageSaysTheBacklog: with a content store, Settings' Hosts says
// how many of this host's snapshots are not in it yet (none here: each
// take ships its own); with none, it says nothing of a content store.
func TestHostsPageSaysTheBacklog(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	bucket, err := objstore.Open(srv.Bucket(t))
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, coretest.Options{ContentStore: &ship.Remote{Objects: bucket, Keys: bucket.Config()}})
	s.env.Box(t, snapshots.Owner(), "amber-fox")
	s.env.TakeReady(t, snapshots.Owner(), "amber-fox", "one")
	want := "<p>" + hosts.UnshippedWords(0, 0) + "</p>"
	if page := s.do(t, "GET", "/settings/hosts", nil, nil).Body.String(); !strings.Contains(page, want) {
		t.Fatalf("the Hosts page with a content store lacks %q:\n%s", want, page)
	}
	plain := newSite(t, coretest.Options{})
	if page := plain.do(t, "GET", "/settings/hosts", nil, nil).Body.String(); strings.Contains(page, "in the content store") {
		t.Fatalf("the Hosts page with no content store speaks of one:\n%s", page)
	}
}

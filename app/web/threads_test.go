package web

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
)

// TestRowsNameTheirThreads: the Snapshots and Machines tabs say the titles
// of the threads their rows name (a box's thread, a snapshot's taker), read
// for the page's rows alone, among an install's many threads.
func TestRowsNameTheirThreads(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO threads (id, title, token_hash) SELECT 'th' || lpad(i::text, 12, '0'), 'Thread number ' || i, decode(md5(i::text), 'hex')
		 FROM generate_series(1, 300) i`,
		`INSERT INTO boxes (id, name, kind, backend_id, host, guest_ref, state, thread_id)
		 VALUES ('bx000000000001', 'amber-fox', 'linux', 'local', '', 'g1', 'ready', 'th000000000205')`,
		`INSERT INTO snapshots (id, box_id, box_name, box_kind, backend_id, name, by_kind, by_thread_id, owner_kind, state)
		 VALUES ('sn000000000001', 'bx000000000001', 'amber-fox', 'linux', 'local', 'before the migration', 'agent', 'th000000000117', 'thread', 'ready')`,
	} {
		if _, err := s.env.Pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tab := s.do(t, "GET", "/boxes/snapshots", nil, nil).Body.String()
	for _, want := range []string{"Thread number 205", "Thread number 117"} {
		if !strings.Contains(tab, want) {
			t.Errorf("the Snapshots tab does not name %q", want)
		}
	}
	if m := s.do(t, "GET", "/boxes", nil, nil).Body.String(); !strings.Contains(m, "Thread number 205") {
		t.Error("the Machines tab does not name amber-fox's thread")
	}
}

// TestThreadTitlesReadOnce: a page's titles are read in one read for the
// rows it names first, and a title beyond them once, even when it cannot be
// read.
func TestThreadTitlesReadOnce(t *testing.T) {
	t.Parallel()
	var reads [][]string
	tt := &threadTitles{known: map[string]string{}, read: func(ids []string) (map[string]string, error) {
		reads = append(reads, slices.Clone(ids))
		out := map[string]string{}
		for _, id := range ids {
			if id != "gone" {
				out[id] = "title of " + id
			}
		}
		return out, nil
	}}
	tt.know([]string{"a", "b", "a"})
	if got := tt.title("a") + "|" + tt.title("b"); got != "title of a|title of b" {
		t.Errorf("titles %q", got)
	}
	if tt.title("gone") != "" || tt.title("gone") != "" {
		t.Error("a thread that is gone has a title")
	}
	if len(reads) != 2 || !slices.Equal(reads[0], []string{"a", "b"}) || !slices.Equal(reads[1], []string{"gone"}) {
		t.Errorf("reads %v, want [[a b] [gone]]", reads)
	}
}

package web

import (
	"context"
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

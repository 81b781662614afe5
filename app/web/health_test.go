package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/dbtest"
)

// TestHealthzSaysDatabaseDown: /healthz answers 200 while the database
// answers, and 503 with why once it does not (its connections ended and
// new ones refused), in words that name neither the database nor where it
// is.
func TestHealthzSaysDatabaseDown(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	if w := s.do(t, "GET", "/healthz", nil, nil); w.Code != http.StatusOK || w.Body.String() != "ok\n" {
		t.Fatalf("/healthz with the database up: %d %q", w.Code, w.Body.String())
	}

	ctx := context.Background()
	var name string
	if err := s.env.Pool.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	// From another database of the cluster: the test's refuses new
	// connections, and every one it has ends.
	other, err := pgx.Connect(ctx, dbtest.NewDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
		t.Fatal(err)
	}

	// The last answer is kept about a second, so it turns within a few.
	deadline := time.Now().Add(10 * time.Second)
	for {
		w := s.do(t, "GET", "/healthz", nil, nil)
		body := w.Body.String()
		if w.Code == http.StatusServiceUnavailable {
			if !strings.HasPrefix(body, "database does not answer: ") {
				t.Fatalf("/healthz with the database down says %q", body)
			}
			for _, secret := range []string{name, "host=", "user=", "postgres://", "127.0.0.1", "/tmp"} {
				if strings.Contains(body, secret) {
					t.Fatalf("/healthz's words %q hold %q", body, secret)
				}
			}
			t.Logf("/healthz: %d %q", w.Code, body)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz with the database down still answers %d %q", w.Code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Again after the kept answer: a new connection refused, as words.
	time.Sleep(healthFor + 100*time.Millisecond)
	w := s.do(t, "GET", "/healthz", nil, nil)
	if w.Code != http.StatusServiceUnavailable || strings.Contains(w.Body.String(), name) {
		t.Fatalf("/healthz later: %d %q", w.Code, w.Body.String())
	}
	t.Logf("/healthz later: %d %q", w.Code, w.Body.String())
}

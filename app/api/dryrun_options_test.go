package api_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/boxsnap/boxsnap/app/api"
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/go-chi/chi/v5"
)

// TestDryRunWithoutRestoresIsAnInternalError: an API built from options
// that lack Restores answers a dry run, over the routes and the agent's
// tools, with the internal error, which it logged, rather than dropping
// the connection on a nil dereference; nothing changes.
func TestDryRunWithoutRestoresIsAnInternalError(t *testing.T) {
	t.Parallel()
	ce := coretest.New(t, coretest.Options{})
	opts := ce.APIOptions()
	opts.Restores = nil // the seam a test once left out by mistake
	r := chi.NewRouter()
	r.Mount("/api/v1", api.New(opts))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	_, token, err := ce.Auth.CreateAPIToken(context.Background(), "cli")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{Env: ce, srv: srv, owner: token}
	agent, c := e.agent(t, "Fix the sign-in flow")
	e.Box(t, c, "amber-fox")
	sn := e.call(t, "POST", "/tools/box_snapshot", agent, map[string]any{"box": "amber-fox", "name": "before"}).must(t, 200).str("snapshot")

	for _, q := range []struct {
		method, path, token string
		body                any
	}{
		{"DELETE", "/boxes/amber-fox/snapshots/" + sn + "?dry_run=true", token, nil},
		{"POST", "/boxes/amber-fox/undo?dry_run=true", token, map[string]any{}},
		{"POST", "/tools/box_snapshot_delete", agent, map[string]any{"box": "amber-fox", "snapshot": sn, "dry_run": true}},
	} {
		a := e.call(t, q.method, q.path, q.token, q.body)
		if a.Status != 500 || a.errorCode() != "internal" || a.errorWords() != "boxsnap could not do this: an internal error, which it logged." {
			t.Errorf("%s %s answered %d %s", q.method, q.path, a.Status, a.Raw)
		}
	}
	if got := e.snapshotNames(t, "amber-fox"); len(got) != 1 {
		t.Errorf("the dry runs changed the snapshots: %v", got)
	}
}

package contents_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// writeTree writes files (path: content) into dir, making folders.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func takeReady(t *testing.T, e *coretest.Env, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, take.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.Wait(t, op); got.State != snapshots.OpDone {
		t.Fatalf("take %s: %s %s", name, got.State, deref(got.Error))
	}
	return sn
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// refusedWith fails t unless err is a refusal whose words hold each of
// words.
func refusedWith(t *testing.T, err error, words ...string) {
	t.Helper()
	r, ok := snapshots.AsRefusal(err)
	if !ok {
		t.Fatalf("want a refusal saying %q, got %v", words, err)
	}
	for _, w := range words {
		if !strings.Contains(r.Words, w) {
			t.Fatalf("refusal %q does not say %q", r.Words, w)
		}
	}
}

// write writes s into the file path.
func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// names is the snapshots of box the person sees, by name.
func names(t *testing.T, e *coretest.Env, box string) map[string]*snapshots.Snapshot {
	t.Helper()
	list, err := e.Core.List(context.Background(), snapshots.Owner(), snapshots.ListQuery{Box: box})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*snapshots.Snapshot{}
	for _, s := range list[0].Snapshots {
		out[s.Name] = s
	}
	return out
}

// keys is m's names.
func keys(m map[string]*snapshots.Snapshot) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// admitReady makes a ready snapshot in an env without workers, by running
// the take's operation directly.
func admitReady(t *testing.T, e *coretest.Env, c snapshots.Caller, box, name string) *snapshots.Snapshot {
	t.Helper()
	op, sn, err := e.Take.Take(context.Background(), c, take.TakeRequest{Box: box, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Core.RunOperation(context.Background(), op.ID); err != nil {
		t.Fatal(err)
	}
	sn, _, err = e.Core.Snapshot(context.Background(), snapshots.Owner(), sn.ID)
	if err != nil || sn.State != snapshots.StateReady {
		t.Fatalf("snapshot %v: %v", sn, err)
	}
	return sn
}

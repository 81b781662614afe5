package contents_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
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

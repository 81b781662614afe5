package qemu_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestQEMUImportRefusesABrokenArchive: a real guest's export, broken on its
// way (empty, not gzip, cut short in its description, its disk or its last
// bytes, a byte flipped in its disk or its check sum, bytes after its end),
// is refused in words that say what is wrong with the file, never a
// library's, and the importing backend is left as it was: no domain, no
// file in its folder, no snapshot. The whole archive is then imported.
func TestQEMUImportRefusesABrokenArchive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g, err := b.Acquire(ctx, providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Name: box, Kind: qemu.KindLinux, Install: "intest"}, Template: template})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	ref, _, _ := take(t, b, g, box, false)
	var whole bytes.Buffer
	if err := b.ExportSnapshot(ctx, ref, providers.ExportOptions{Name: "whole"}, &whole); err != nil {
		t.Fatalf("ExportSnapshot: %v", err)
	}

	other, cfg := newBackendConfig(t)
	group := providertest.NewID("bx")
	for _, c := range providertest.BrokenArchives(t, whole.Bytes(), "disk") {
		t.Run(c.Name, func(t *testing.T) {
			_, err := other.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, []io.Reader{bytes.NewReader(c.Bytes)})
			providertest.RefusedInWords(t, err, c.Words)
			if err != nil && !strings.HasPrefix(err.Error(), "Archive 1 of the batch: ") {
				t.Errorf("the refusal %q does not name the archive", err)
			}
			if doms, err := other.Domains(ctx); err != nil || len(doms) != 0 {
				t.Errorf("the refused import left the domains %+v (%v)", doms, err)
			}
			if held := heldOf(t, other, group); len(held) != 0 {
				t.Errorf("the refused import left the snapshots %+v", held)
			}
			if left := filesUnder(t, cfg.Dir); len(left) != 0 {
				t.Errorf("the refused import left %v in the backend's folder", left)
				for _, p := range left {
					_ = os.Remove(p) // so the next case starts clean
				}
			}
		})
	}
	got, err := other.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, []io.Reader{bytes.NewReader(whole.Bytes())})
	if err != nil || len(got) != 1 || got[0].Ref.ID != ref.ID {
		t.Fatalf("the whole archive imported %+v, %v", got, err)
	}
}

// filesUnder lists the files (not folders) under dir.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package local

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestImportRefusesABrokenArchive: an archive an export wrote, broken on its
// way (empty, not gzip, cut short in its description, its manifest, the
// middle of its content or its last bytes, a byte flipped in its compressed
// content or its check sum, bytes after its end), is refused in words that
// say what is wrong with the file, never a library's, and the store is left
// as it was: no snapshot, no content, nothing staged, no group. The whole
// archive is then imported.
func TestImportRefusesABrokenArchive(t *testing.T) {
	t.Parallel()
	src := setup(t)
	var notes strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&notes, "line %d of the box's notes: %d apples, %d pears\n", i, i*7%113, i*13%97)
	}
	src.write(t, "notes.txt", notes.String())
	src.write(t, "small.txt", "a small file")
	_, ref := src.take(t)
	var whole bytes.Buffer
	if err := src.b.ExportSnapshot(src.ctx, ref, providers.ExportOptions{Name: "notes"}, &whole); err != nil {
		t.Fatal(err)
	}
	for _, c := range providertest.BrokenArchives(t, whole.Bytes(), "content/") {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			h := setupHostile(t)
			_, err := h.b.ImportSnapshots(h.ctx, providers.ImportOptions{Group: h.g.Ref}, []io.Reader{bytes.NewReader(c.Bytes)})
			providertest.RefusedInWords(t, err, c.Words)
			if err != nil && !strings.HasPrefix(err.Error(), "Archive 1 of the batch: ") {
				t.Errorf("the refusal %q does not name the archive", err)
			}
			h.emptyStore(t)
			if _, err := os.Lstat(h.b.GroupFile(h.g.Ref)); !os.IsNotExist(err) {
				t.Errorf("the refused import wrote its group's file (%v)", err)
			}
		})
	}
	h := setupHostile(t)
	got, err := h.b.ImportSnapshots(h.ctx, providers.ImportOptions{Group: h.g.Ref}, []io.Reader{bytes.NewReader(whole.Bytes())})
	if err != nil || len(got) != 1 || got[0].Ref.ID != ref.ID {
		t.Fatalf("the whole archive imported %+v, %v", got, err)
	}
}

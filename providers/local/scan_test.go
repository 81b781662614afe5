package local

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers/local/confined"
)

// A folder the box removes after the take opened it and before the take
// read it reads as empty, not as a failed take: CI's
// TestJournalTakeEqualsWalkTake once failed a busy take with "readdirent
// …: no such file or directory".
func TestScanReadsAFolderRemovedAfterItsOpenAsEmpty(t *testing.T) {
	openRemoved := func() *os.File {
		dir := filepath.Join(t.TempDir(), "gone")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := os.Remove(dir); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if _, err := openRemoved().Readdirnames(-1); err == nil {
		t.Skip("this kernel reads a removed folder without an error; nothing to check")
	}
	names, err := confined.ReadNames(openRemoved())
	if err != nil || len(names) != 0 {
		t.Fatalf("readNames of a folder removed after its open = %v, %v; want none and no error", names, err)
	}
}

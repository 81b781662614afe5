package providers_test

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// TestRoomCountsAsDfDoes: on a file system that keeps half its blocks for
// root, a folder's room is read as df reads it, not as full for the blocks
// kept.
func TestRoomCountsAsDfDoes(t *testing.T) {
	mnt := providertest.Ext4(t, 64<<20, 50)
	if err := os.WriteFile(filepath.Join(mnt, "data"), make([]byte, 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := providers.ReadRoom(mnt)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("df", "--output=pcent,avail", "-B1", mnt).Output()
	if err != nil {
		t.Fatalf("df: %v", err)
	}
	f := strings.Fields(string(out))
	pct, _ := strconv.Atoi(strings.TrimSuffix(f[len(f)-2], "%"))
	avail, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
	if r.Free != avail {
		t.Errorf("free %d bytes, df says %d", r.Free, avail)
	}
	// df rounds its percentage up.
	if got := r.PercentFull(); math.Ceil(got) != float64(pct) {
		t.Errorf("%.1f%% full, df says %d%%", got, pct)
	}
	if r.PercentFull() > 40 {
		t.Errorf("a file system holding 8 MiB of 64 MiB reads %.0f%% full: the blocks kept for root were counted as taken", r.PercentFull())
	}
	if _, err := providers.ReadRoom(filepath.Join(mnt, "none")); err == nil || !strings.Contains(err.Error(), "read the room of") {
		t.Errorf("the room of a missing folder: %v", err)
	}
}

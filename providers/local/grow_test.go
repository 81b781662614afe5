package local

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// TestANewImageTakesOnlyItsSetUpOnTheHost: a box made while the growth
// watch runs (for the boxes made before it) takes on the host what a new
// image takes, about 170 MiB for a 16 GiB bound, and no more: the watch
// never reads an image half set up, whose room falls fast as it is held,
// as a box writing gigabytes a second to be given room ahead.
func TestANewImageTakesOnlyItsSetUpOnTheHost(t *testing.T) {
	loopOrSkip(t)
	host := smallStore(t, 3<<30)
	root := filepath.Join(host, "data")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Root: root, Install: "in-test", NoSync: true, DiskImages: true})
	if err != nil {
		t.Fatal(err)
	}
	unmountAtEnd(t, b)
	for i := range 4 {
		box := fmt.Sprintf("bxnew%d", i)
		if _, err := b.Acquire(t.Context(), providers.BoxSpec{Box: providers.BoxIdentity{ID: box, Kind: "linux"},
			Limits: providers.BoxLimits{DiskBytes: 16 << 30}}); err != nil {
			t.Fatal(err)
		}
		// The watch's turns while the box stands: it writes nothing, so
		// nothing more is given to it.
		for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(25 * time.Millisecond) {
			if a := allocated(t, b.ImageFile(box)); a > 256<<20 {
				t.Fatalf("box %d's new 16 GiB image takes %d MiB on the host, want about 170", i, a>>20)
			}
		}
	}
}

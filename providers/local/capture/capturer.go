package capture

import (
	"sync"
	"sync/atomic"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/apply"
	"github.com/boxsnap/boxsnap/providers/local/state"
)

// Capturer reads a box's folder into a manifest, copying the content the
// store lacks into it, and publishes the snapshot whole.
type Capturer struct {
	// Writer gives the store, the copier, the scanner, the log and the
	// workers a capture copies on.
	*apply.Writer
	// ID is the backend's ID in settings, and Install this install's:
	// both written on every label.
	ID, Install string
	// States records a take in the box's state file.
	States *state.States
	// Price is what holding a snapshot costs, as Snapshotting says; nil
	// for free (Config.Price).
	Price *providers.Price
	// ForksShare says whether forks here share their snapshot's files, as
	// Snapshotting says, without I/O on the data folder; nil for no.
	ForksShare func() bool
	// UpperOf is the upper layer of the overlay mounted on a box's
	// folder, or "" for a box that is no overlay; nil for none. A file
	// whose data lies in the overlay's lower layer is none of the box's
	// hard links (journal.Lower).
	UpperOf func(dir string) string
	// Root is the store's folder, whose file system Storage reads.
	Root string
	// NoSync skips the syncfs before a snapshot is published (Config's).
	NoSync bool
	// Unshipped publishes each snapshot marked not yet in the content
	// store (store.FileUnshipped), with a content store.
	Unshipped bool
	// Hooks lets the backend's own tests reach inside a capture; nil hooks
	// do nothing.
	Hooks *Hooks

	noTmpfile atomic.Bool // the file system refused O_TMPFILE once
	ratesMu   sync.Mutex  // held to read and write rates.json
}

// Hooks lets the backend's own tests make a file change mid-capture: nil
// outside tests.
type Hooks struct {
	// Mu is held while AfterCopy runs, as copies run at once.
	Mu sync.Mutex
	// AfterScan runs after a capture's scan, before links are read and
	// files copied.
	AfterScan func()
	// AfterCopy runs after a file's content was copied, before its
	// re-stat.
	AfterCopy func(rel string)
}

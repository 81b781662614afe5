package boxfiles

import (
	"context"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// Files reads a snapshot's and a box's files through look containers and
// the engine's archive endpoint (providers.Browser, files.go), and writes
// boxsnap's files into a box (write.go), through E. It holds the look
// containers in use, one per snapshot.
type Files struct {
	E Engine

	mu   sync.Mutex
	held map[string]*lookUse
}

// lookUse is one look container and how many calls read it.
type lookUse struct {
	id    string
	users int
}

// Engine is what Files asks of the Docker backend: its client, where a
// box's volume is, and its snapshots' images, volume copies, labels and
// containers as the backend makes them.
type Engine interface {
	// Client is the engine's client.
	Client() *client.Client
	// VolumePath is where a box's volume is mounted in its container.
	VolumePath() string
	// SnapImage and SnapVolume are a snapshot's image tag and its volume
	// copy's name.
	SnapImage(snap string) string
	SnapVolume(snap string) string
	// LookLabels are the labels of the look container of a snapshot.
	LookLabels(snap string) map[string]string
	// SnapshotWhole refuses a snapshot whose image or volume copy is
	// missing or not whole.
	SnapshotWhole(ctx context.Context, snap string) error
	// SnapshotVolumeInImage says whether a snapshot's image holds its
	// volume (else it has a volume copy of its own).
	SnapshotVolumeInImage(ctx context.Context, snap string) (bool, error)
	// MustInspect reads a box's container; one that is not there is
	// providers.ErrNotFound.
	MustInspect(ctx context.Context, g providers.Guest) (container.InspectResponse, error)
	// Wrap gives an engine error boxsnap's meaning (an engine that does
	// not answer, an absent object), saying what was done.
	Wrap(err error, what string) error
}

// callTimeout bounds a call to the engine that is not a stream.
const callTimeout = 30 * time.Second

func short(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, callTimeout)
}

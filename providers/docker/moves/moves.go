package moves

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"time"

	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// Moves answers a Docker backend's exports, imports and share copies
// (providers.Exporter) through E.
type Moves struct {
	E Engine
}

// Engine is what Moves asks of the Docker backend: its client, where a
// box's volume is, and its snapshots' images, labels, look containers and
// loads, as the backend makes them.
type Engine interface {
	// Client is the engine's client.
	Client() *client.Client
	// VolumePath is where a box's volume is mounted in its container.
	VolumePath() string
	// SnapshotImage reads a whole snapshot's image (its volume copy too,
	// where it has one).
	SnapshotImage(ctx context.Context, snap string) (image.InspectResponse, error)
	// SnapImage is the tag of a snapshot's image.
	SnapImage(snap string) string
	// Describe reads what a snapshot's image says of it on its labels.
	Describe(img image.InspectResponse) Described
	// Labels are the labels of this install's snapshot d of the box group.
	Labels(group string, d Described) map[string]string
	// LookAt gives the container, never started, that reads a snapshot's
	// files (its volume copy mounted where it has one), and its release.
	LookAt(ctx context.Context, snap string) (string, func(), error)
	// Walk streams every entry of a look container's files but the
	// engine's own, each folder before what it holds, the stream at a
	// file's content.
	Walk(ctx context.Context, look string, fn func(e Entry, content io.Reader) error) error
	// Load loads a docker-archive tar (POST /images/load), saying what it
	// loads in its errors.
	Load(ctx context.Context, r io.Reader, what string) error
	// Guest is the guest of the box group's snapshots.
	Guest(group string) providers.Guest
	// LoadsOnLayers says whether the engine loads an image whose archive
	// names layers it holds without their content (an engine on
	// containerd's image store does not).
	LoadsOnLayers(ctx context.Context) bool
	// Room is the engine's data root's room, as far as it is known (a
	// zero Storage where it is not).
	Room(ctx context.Context) (providers.Storage, error)
}

// Described is what a snapshot's image says of it: its ID, when it was
// taken, the identity reset's version it holds, and the folder that holds
// its volume ("" where its volume is a copy of its own).
type Described struct {
	Snapshot     string
	TakenAt      time.Time
	ResetVersion int
	VolumeIn     string
}

// Entry is one path of a look container's files, relative to its root:
// its type ("file", "dir", "link", "other"), a link's target, the path a
// hard link shares its content with, and a file's size.
type Entry struct {
	Path, Type, Target, SameAs string
	Size                       int64
}

// maxEntries bounds the paths a scrub holds, so a hostile tree cannot
// fill the server's memory.
const maxEntries = 1 << 20

// callTimeout bounds a call to the engine that is not a save or a load.
const callTimeout = 30 * time.Second

func short(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, callTimeout)
}

// TarFile writes a file of the host into a tar under name, from its start:
// a layer's file into a docker-archive tar, a description into an export.
func TarFile(tw *tar.Writer, name string, f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: st.Size()}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

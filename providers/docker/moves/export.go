package moves

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/moby/moby/api/types/image"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// Moves answers providers.Exporter for a Docker backend.
var _ providers.Exporter = (*Moves)(nil)

// A Docker snapshot's archive is a gzip-compressed tar holding, in this
// order:
//
//	boxsnap-archive.json  what it is (archiveInfo): the snapshot's ID, member
//	                      name, parent, the base it leaves layers out
//	                      against, its image's config and the diff ID of
//	                      each of its layers, bottom first
//	layers/<hex>.tar      each layer it carries, from the first it does not
//	                      leave out, named by its diff ID's hex
//
// The layers it leaves out are the bottom ones it shares with its base,
// which the other install holds: an engine keys a layer by the chain of
// those below it, so only a shared bottom is the same layer there. A
// snapshot whose volume is a copy of its own carries that copy as one more
// layer, so an import always holds the volume in its image.
const (
	dockerArchiveMeta   = "boxsnap-archive.json"
	dockerArchiveLayers = "layers/"
	dockerArchiveFormat = 1
	dockerArchiveKind   = "docker-image"
	// maxArchiveMeta bounds the description an import reads into memory.
	maxArchiveMeta = 1 << 20
	// maxImageLayers bounds an imported image's layers below what overlay2
	// stacks (128), with room for a fork's own.
	maxImageLayers = 120
)

// archiveInfo is a Docker archive's description.
type archiveInfo struct {
	Format       int         `json:"format"`
	Kind         string      `json:"kind"`
	ID           string      `json:"id"`
	Name         string      `json:"name"`
	Parent       string      `json:"parent,omitempty"`
	Base         string      `json:"base,omitempty"`
	TakenAt      time.Time   `json:"takenAt"`
	ResetVersion int         `json:"resetVersion,omitempty"`
	VolumeIn     string      `json:"volumeIn"`
	Architecture string      `json:"architecture"`
	OS           string      `json:"os"`
	Config       imageConfig `json:"config"`
	Layers       []string    `json:"layers"`
	// Carried is the index of the first layer the archive carries: those
	// below are its base's.
	Carried int `json:"carried"`
}

// imageConfig is what of an image's config an archive carries: how its
// box's process runs. Nothing else of another install's config is loaded
// (no volumes, ports, health checks or build triggers of its own).
type imageConfig struct {
	Cmd        []string `json:"cmd,omitempty"`
	Entrypoint []string `json:"entrypoint,omitempty"`
	Env        []string `json:"env,omitempty"`
	User       string   `json:"user,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	StopSignal string   `json:"stopSignal,omitempty"`
}

// carriedLayer is one layer an export carries, in a file of the host.
type carriedLayer struct {
	diffID string
	file   *os.File
}

// ExportSnapshot writes one snapshot as one archive: its image's layers
// (with opts.Base, only those above the bottom it shares with the base),
// its volume copy as a layer where it has one, and, with opts.Scrub, a top
// layer that removes the secrets (share.go).
func (b *Moves) ExportSnapshot(ctx context.Context, ref providers.SnapshotRef, opts providers.ExportOptions, w io.Writer) error {
	img, err := b.E.SnapshotImage(ctx, ref.Ref)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	// The archive names the snapshot by boxsnap's ID, which its image's
	// tag on the other engine takes.
	id := ref.ID
	if id == "" {
		id = ref.Ref
	}
	info := archiveInfoOf(img, b.E.Describe(img), id, opts)
	var extra []carriedLayer
	defer func() {
		for _, l := range extra {
			removeLayerFile(l.file)
		}
	}()
	if info.VolumeIn == "" {
		l, err := b.volumeCopyLayer(ctx, ref.Ref)
		if err != nil {
			return fmt.Errorf("export snapshot %s: %w", ref.Ref, err)
		}
		extra = append(extra, l)
		info.VolumeIn = b.E.VolumePath()
	}
	if opts.Scrub != nil {
		if !validRef(opts.AsID) {
			return &providers.RefusedError{Why: fmt.Sprintf("The copy's ID %q is not a snapshot ID", opts.AsID)}
		}
		l, rep, err := b.scrubLayer(ctx, ref, *opts.Scrub)
		if err != nil {
			return fmt.Errorf("export a copy of %s: %w", ref.Ref, err)
		}
		if len(rep.Blocked) > 0 {
			removeLayerFile(l.file)
			return &providers.BlockedError{Blocked: rep.Blocked}
		}
		extra = append(extra, l)
		info.ID, info.Parent, info.Base, opts.Base = opts.AsID, "", "", nil
		info.Name = opts.Name
		if info.Name == "" {
			info.Name = opts.AsID
		}
	}
	if opts.Base != nil {
		base, err := b.E.SnapshotImage(ctx, opts.Base.Ref)
		if err != nil {
			return fmt.Errorf("export against base: %w", err)
		}
		info.Base = opts.Base.ID
		info.Carried = sharedBottom(base.RootFS.Layers, img.RootFS.Layers)
	}
	saved, err := b.savedLayers(ctx, b.E.SnapImage(ref.Ref), img.RootFS.Layers[info.Carried:])
	defer func() {
		for _, l := range saved {
			removeLayerFile(l.file)
		}
	}()
	if err != nil {
		return fmt.Errorf("export snapshot %s: %w", ref.Ref, err)
	}
	for _, l := range extra {
		info.Layers = append(info.Layers, l.diffID)
	}
	return writeDockerArchive(w, info, append(saved, extra...))
}

// archiveInfoOf describes a snapshot's image for its archive; the parent
// is the records' (opts.Parent), since an image does not name it.
func archiveInfoOf(img image.InspectResponse, d Described, snap string, opts providers.ExportOptions) archiveInfo {
	info := archiveInfo{Format: dockerArchiveFormat, Kind: dockerArchiveKind, ID: snap, Name: opts.Name, Parent: opts.Parent,
		TakenAt: d.TakenAt, ResetVersion: d.ResetVersion, VolumeIn: d.VolumeIn, Architecture: img.Architecture, OS: img.Os,
		Config: imageConfig{Cmd: img.Config.Cmd, Entrypoint: img.Config.Entrypoint, Env: img.Config.Env, User: img.Config.User,
			WorkingDir: img.Config.WorkingDir, StopSignal: img.Config.StopSignal},
		Layers: append([]string(nil), img.RootFS.Layers...)}
	if info.Name == "" {
		info.Name = snap
	}
	return info
}

// sharedBottom is how many layers, from the bottom, two images share.
func sharedBottom(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// savedLayers reads the layers want names (by diff ID) out of the engine's
// save of the image (GET /images/get), each into a file of the host, in
// want's order. A save's layer is the uncompressed tar whose SHA-256 is its
// diff ID, in the engine's older format (<id>/layer.tar) and in the OCI
// one (blobs/sha256/<digest>) alike; every other entry is passed over.
func (b *Moves) savedLayers(ctx context.Context, ref string, want []string) ([]carriedLayer, error) {
	if len(want) == 0 {
		return nil, nil
	}
	wanted := map[string]bool{}
	for _, d := range want {
		wanted[d] = true
	}
	res, err := b.E.Client().ImageSave(ctx, []string{ref})
	if err != nil {
		return nil, fmt.Errorf("save the snapshot's image: %w", err)
	}
	defer func() { _ = res.Close() }()
	held := map[string]*os.File{}
	var out []carriedLayer
	defer func() {
		if len(out) == 0 {
			for _, f := range held {
				removeLayerFile(f)
			}
		}
	}()
	tr := tar.NewReader(res)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the engine's save of the image: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg || (!strings.HasSuffix(hdr.Name, "/layer.tar") && !strings.HasPrefix(hdr.Name, "blobs/sha256/")) {
			continue
		}
		if d, ok := strings.CutPrefix(hdr.Name, "blobs/sha256/"); ok && !wanted["sha256:"+d] {
			continue
		}
		f, diffID, err := hashedFile(tr)
		if err != nil {
			return nil, fmt.Errorf("read the engine's save of the image: %w", err)
		}
		if !wanted[diffID] || held[diffID] != nil {
			removeLayerFile(f)
			continue
		}
		held[diffID] = f
		if len(held) == len(wanted) {
			break // the rest of the save is not read
		}
	}
	for _, d := range want {
		if held[d] == nil {
			for _, f := range held {
				removeLayerFile(f)
			}
			return nil, fmt.Errorf("the engine's save of the image lacks its layer %s", d)
		}
		out = append(out, carriedLayer{diffID: d, file: held[d]})
	}
	return out, nil
}

// hashedFile copies r into a new file of the host and gives its diff ID.
func hashedFile(r io.Reader) (*os.File, string, error) {
	f, err := os.CreateTemp("", "boxsnap-export-*.tar")
	if err != nil {
		return nil, "", fmt.Errorf("make a file for a layer: %w", err)
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), r); err != nil {
		removeLayerFile(f)
		return nil, "", err
	}
	return f, "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// removeLayerFile closes and removes a layer's file.
func removeLayerFile(f *os.File) {
	if f != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
}

// volumeCopyLayer writes a snapshot's volume copy as a layer under the
// volume's folder, over an opaque whiteout of it (the image's own content
// there is hidden, as the box's volume hides it), read through the engine's
// archive endpoint from a look container that mounts the copy.
func (b *Moves) volumeCopyLayer(ctx context.Context, snap string) (carriedLayer, error) {
	id, done, err := b.E.LookAt(ctx, snap)
	if err != nil {
		return carriedLayer{}, err
	}
	defer done()
	res, err := b.E.Client().CopyFromContainer(ctx, id, client.CopyFromContainerOptions{SourcePath: b.E.VolumePath()})
	if err != nil {
		return carriedLayer{}, fmt.Errorf("read the snapshot's volume copy: %w", err)
	}
	defer func() { _ = res.Content.Close() }()
	f, err := os.CreateTemp("", "boxsnap-export-*.tar")
	if err != nil {
		return carriedLayer{}, fmt.Errorf("make a file for the volume's layer: %w", err)
	}
	h := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(f, h))
	at := strings.Trim(b.E.VolumePath(), "/")
	parent := path.Dir(at)
	fail := func(err error) (carriedLayer, error) {
		removeLayerFile(f)
		return carriedLayer{}, fmt.Errorf("write the volume's layer: %w", err)
	}
	tr := tar.NewReader(res.Content)
	first := true
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(err)
		}
		// The engine names the folder by its last part, and what it holds
		// under that.
		name := path.Clean(parent + "/" + hdr.Name)
		if name != at && !strings.HasPrefix(name, at+"/") {
			return fail(fmt.Errorf("the engine's stream holds an entry named %q, outside the volume", hdr.Name))
		}
		hdr.Name = name
		if hdr.Typeflag == tar.TypeDir {
			hdr.Name += "/"
		}
		if hdr.Typeflag == tar.TypeLink {
			hdr.Linkname = path.Clean(parent + "/" + hdr.Linkname)
			if !strings.HasPrefix(hdr.Linkname, at+"/") {
				return fail(fmt.Errorf("the engine's stream holds a hard link to %q, outside the volume", hdr.Linkname))
			}
		}
		// The names written are these; a record of the old ones goes.
		delete(hdr.PAXRecords, "path")
		delete(hdr.PAXRecords, "linkpath")
		if err := tw.WriteHeader(hdr); err != nil {
			return fail(err)
		}
		if first {
			first = false
			if err := tw.WriteHeader(&tar.Header{Name: at + "/.wh..wh..opq", Typeflag: tar.TypeReg, Mode: 0o600}); err != nil {
				return fail(err)
			}
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := io.Copy(tw, tr); err != nil {
				return fail(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return fail(err)
	}
	return carriedLayer{diffID: "sha256:" + hex.EncodeToString(h.Sum(nil)), file: f}, nil
}

// writeDockerArchive writes the archive: its description, then each layer
// it carries, in order.
func writeDockerArchive(w io.Writer, info archiveInfo, layers []carriedLayer) error {
	// Layers of a box are mostly compressed or random already: the fastest
	// level keeps an export near the disk's speed.
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	now := time.Now().UTC()
	meta, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: dockerArchiveMeta, Mode: 0o600, Size: int64(len(meta)), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	if _, err := tw.Write(meta); err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	for _, l := range layers {
		if err := writeCarried(tw, l, now); err != nil {
			return fmt.Errorf("export snapshot %s: %w", info.ID, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("export snapshot %s: %w", info.ID, err)
	}
	return zw.Close()
}

// writeCarried writes one carried layer's file into the archive.
func writeCarried(tw *tar.Writer, l carriedLayer, now time.Time) error {
	st, err := l.file.Stat()
	if err != nil {
		return err
	}
	if _, err := l.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	name := dockerArchiveLayers + strings.TrimPrefix(l.diffID, "sha256:") + ".tar"
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o444, Size: st.Size(), ModTime: now, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, l.file)
	return err
}

package moves

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// DefaultMaxImportBytes bounds the layers one import's batch unpacks, as the
// upload itself is bounded: an archive is compressed, and a few MB of it can
// unpack to many GB.
const DefaultMaxImportBytes = 64 << 30

// refPattern is the shape of the IDs an archive names (snapshots, boxes): a
// label's value and an image tag's, never a path.
var refPattern = regexp.MustCompile(`^[a-z][a-z0-9]{1,39}$`)

// diffIDPattern is a layer's diff ID.
var diffIDPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// archPattern is an image's architecture.
var archPattern = regexp.MustCompile(`^[a-z0-9_]{1,20}$`)

func validRef(s string) bool { return refPattern.MatchString(s) }

// stagedImage is one archive of a batch, read and checked, its layers in
// files of the host.
type stagedImage struct {
	info     archiveInfo
	layers   []*os.File // the layers it carries, from info.Carried
	position int
	already  bool
	loaded   string // the image ID its load made
}

// ImportSnapshots reads a batch of archives, in any order, checks every one
// whole (its description, each layer's diff ID, what each layer's tar
// holds, and that the layers an archive leaves out are its base's, in the
// batch or on this engine) before it loads any, then loads each untagged,
// its base first, and only once all are loaded tags them as this install's
// snapshots of the box opts.Group: a refusal leaves no snapshot.
func (b *Moves) ImportSnapshots(ctx context.Context, opts providers.ImportOptions, archives []io.Reader) ([]providers.ImportedSnapshot, error) {
	if !validRef(opts.Group) {
		return nil, importRefused("The box's ID %q is not an ID", opts.Group)
	}
	budget := int64(DefaultMaxImportBytes)
	var batch []*stagedImage
	defer func() {
		for _, s := range batch {
			for _, f := range s.layers {
				removeLayerFile(f)
			}
		}
	}()
	for i, r := range archives {
		s, err := readDockerArchive(ctx, r, i+1, &budget)
		if s != nil {
			batch = append(batch, s)
		}
		if err != nil {
			var re *providers.RefusedError
			if errors.As(err, &re) {
				return nil, importRefused("Archive %d of the batch: %s", i+1, re.Why)
			}
			return nil, fmt.Errorf("import archive %d: %w", i+1, err)
		}
	}
	ordered, err := b.checkImportBatch(ctx, batch)
	if err != nil {
		return nil, err
	}
	if err := b.checkImportRoom(ctx, opts.RoomPercent, ordered); err != nil {
		return nil, err
	}
	if err := b.loadBatch(ctx, ordered, opts.Group); err != nil {
		return nil, err
	}
	var out []providers.ImportedSnapshot
	seen := map[string]bool{}
	for _, s := range batch {
		if seen[s.info.ID] {
			continue // twice in the batch: answered once
		}
		seen[s.info.ID] = true
		out = append(out, providers.ImportedSnapshot{
			Ref:  providers.SnapshotRef{ID: s.info.ID, Ref: s.info.ID, Storage: "docker", Where: "current", Guest: b.E.Guest(opts.Group)},
			Name: s.info.Name, Parent: s.info.Parent, Holds: providers.HoldsDisk, Already: s.already,
		})
	}
	return out, nil
}

// importRefused is an import's refusal, in words that say nothing was
// imported.
func importRefused(format string, a ...any) error {
	return &providers.RefusedError{Why: fmt.Sprintf(format, a...) + ". Nothing was imported."}
}

// readDockerArchive reads one archive: its description first, checked
// whole before a byte of a layer is kept, then each layer it carries, in
// order, checked against its diff ID and bounded by budget. A stream that
// breaks part-way (cut short, damaged) or goes on past its tar's end is
// the archive's fault, refused in words, whatever part of it was being
// read (providers.ArchiveStream); a write that fails stays the host's. The
// layers staged before a refusal are given back for removal.
func readDockerArchive(ctx context.Context, r io.Reader, pos int, budget *int64) (*stagedImage, error) {
	zs, err := providers.OpenArchive(r)
	if err != nil {
		return nil, err
	}
	s, err := readDockerTar(ctx, tar.NewReader(zs), pos, budget)
	if err == nil {
		err = zs.End()
	}
	return s, zs.Fault(err)
}

// readDockerTar reads one archive's tar (readDockerArchive).
func readDockerTar(ctx context.Context, tr *tar.Reader, pos int, budget *int64) (*stagedImage, error) {
	refuse := func(format string, a ...any) error { return &providers.RefusedError{Why: fmt.Sprintf(format, a...)} }
	hdr, err := tr.Next()
	if err != nil {
		return nil, err // the stream's or the tar's fault: readDockerArchive says it
	}
	if hdr.Name != dockerArchiveMeta || hdr.Typeflag != tar.TypeReg {
		return nil, refuse("it does not begin with its description (%s)", dockerArchiveMeta)
	}
	if hdr.Size > maxArchiveMeta {
		return nil, refuse("its description is %d bytes, more than the %d KiB a description may be", hdr.Size, maxArchiveMeta>>10)
	}
	raw, err := io.ReadAll(io.LimitReader(tr, maxArchiveMeta))
	if err != nil {
		return nil, err
	}
	s := &stagedImage{position: pos}
	if err := json.Unmarshal(raw, &s.info); err != nil {
		return nil, refuse("its description is unreadable (%v)", err)
	}
	if err := checkArchiveInfo(&s.info); err != nil {
		return nil, err
	}
	for _, d := range s.info.Layers[s.info.Carried:] {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return s, refuse("it ends before its layer %s", short12(d))
		}
		if err != nil {
			return s, err
		}
		if want := dockerArchiveLayers + strings.TrimPrefix(d, "sha256:") + ".tar"; hdr.Name != want || hdr.Typeflag != tar.TypeReg {
			return s, refuse("it holds %q where its layer %s belongs", hdr.Name, short12(d))
		}
		if hdr.Size > *budget {
			return s, refuse("its layers unpack to more than the %d GiB an import may hold", DefaultMaxImportBytes>>30)
		}
		*budget -= hdr.Size
		f, err := stageLayer(tr, d)
		if err != nil {
			return s, err
		}
		s.layers = append(s.layers, f)
	}
	if hdr, err := tr.Next(); err != io.EOF {
		if err != nil {
			return s, err
		}
		return s, refuse("it holds an unexpected file %q", hdr.Name)
	}
	return s, nil
}

// checkArchiveInfo checks a description's every field: IDs of the shape
// boxsnap makes, a member name, layers named by diff ID and no more than
// an engine stacks, the carried ones a part of them, and a config whose
// strings are bounded.
func checkArchiveInfo(info *archiveInfo) error {
	refuse := func(format string, a ...any) error { return &providers.RefusedError{Why: fmt.Sprintf(format, a...)} }
	switch {
	case info.Format != dockerArchiveFormat || info.Kind != dockerArchiveKind:
		return refuse("it is not a Docker snapshot's archive of format %d", dockerArchiveFormat)
	case !validRef(info.ID):
		return refuse("it names no valid snapshot ID")
	case info.Parent != "" && !validRef(info.Parent):
		return refuse("snapshot %s names no valid parent", info.ID)
	case info.Base != "" && !validRef(info.Base):
		return refuse("snapshot %s names no valid base", info.ID)
	case info.Name == "" || len(info.Name) > 200 || strings.ContainsAny(info.Name, "\x00\n\r/"):
		return refuse("snapshot %s has no valid member name", info.ID)
	case len(info.Layers) == 0 || len(info.Layers) > maxImageLayers:
		return refuse("snapshot %s has %d layers; an image here may have 1 to %d", info.ID, len(info.Layers), maxImageLayers)
	case info.Carried < 0 || info.Carried > len(info.Layers):
		return refuse("snapshot %s carries layers it does not have", info.ID)
	case info.Carried > 0 && info.Base == "":
		return refuse("snapshot %s leaves out %d layers but names no base that holds them", info.ID, info.Carried)
	case info.VolumeIn != "" && (!path.IsAbs(info.VolumeIn) || path.Clean(info.VolumeIn) != info.VolumeIn || info.VolumeIn == "/"):
		return refuse("snapshot %s holds its volume at %q, which is no folder", info.ID, info.VolumeIn)
	case info.Architecture == "" || !archPattern.MatchString(info.Architecture) || info.OS != "linux":
		return refuse("snapshot %s is of %s/%s; this backend runs linux images", info.ID, info.OS, info.Architecture)
	}
	seen := map[string]bool{}
	for _, d := range info.Layers {
		if !diffIDPattern.MatchString(d) {
			return refuse("snapshot %s names a layer %q that is no diff ID", info.ID, d)
		}
		seen[d] = true
	}
	c := info.Config
	strs := slices.Concat(c.Cmd, c.Entrypoint, c.Env, []string{c.User, c.WorkingDir, c.StopSignal})
	if len(strs) > 1000 {
		return refuse("snapshot %s's config holds more than 1,000 strings", info.ID)
	}
	for _, v := range strs {
		if len(v) > 64<<10 || strings.ContainsRune(v, 0) {
			return refuse("snapshot %s's config holds a string longer than 64 KiB or with a NUL", info.ID)
		}
	}
	return nil
}

// short12 is a diff ID's first 12 hex digits, for words.
func short12(d string) string {
	h := strings.TrimPrefix(d, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// stageLayer copies one layer into a file of the host, checking its diff
// ID and what its tar holds as it streams (checkLayerEntry): a layer is
// kept only whole and as named.
func stageLayer(r io.Reader, diffID string) (*os.File, error) {
	f, err := os.CreateTemp("", "boxsnap-import-*.tar")
	if err != nil {
		return nil, fmt.Errorf("make a file for a layer: %w", err)
	}
	h := sha256.New()
	tee := io.TeeReader(r, io.MultiWriter(f, h))
	lr := tar.NewReader(tee)
	for {
		hdr, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			removeLayerFile(f)
			return nil, layerBroken(diffID, err)
		}
		if err := checkLayerEntry(hdr); err != nil {
			removeLayerFile(f)
			return nil, &providers.RefusedError{Why: fmt.Sprintf("its layer %s %s", short12(diffID), err.Error())}
		}
		if _, err := io.Copy(io.Discard, lr); err != nil {
			removeLayerFile(f)
			return nil, layerBroken(diffID, err)
		}
	}
	if _, err := io.Copy(io.Discard, tee); err != nil { // the tar's padding
		removeLayerFile(f)
		return nil, layerBroken(diffID, err)
	}
	if "sha256:"+hex.EncodeToString(h.Sum(nil)) != diffID {
		removeLayerFile(f)
		return nil, &providers.RefusedError{Why: fmt.Sprintf("its layer %s does not match its diff ID", short12(diffID))}
	}
	return f, nil
}

// layerBroken is a layer whose tar could not be read to its end: the
// archive's stream broke (readDockerArchive says so, whatever this says), a
// write of the layer's file failed on the host, or the layer's bytes are no
// tar.
func layerBroken(diffID string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("stage the layer %s: %w", short12(diffID), err)
	}
	return &providers.RefusedError{Why: fmt.Sprintf("its layer %s is no whole tar", short12(diffID))}
}

// checkLayerEntry refuses what a box's layer never needs and the engine
// would make as root on its host: a name or a hard link that climbs out
// of the image with .. or starts at /, and device nodes (a box runs
// unprivileged, and its devices are the engine's to give).
func checkLayerEntry(hdr *tar.Header) error {
	names := []string{hdr.Name}
	if hdr.Typeflag == tar.TypeLink {
		names = append(names, hdr.Linkname)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "/") || slices.Contains(strings.Split(n, "/"), "..") {
			return fmt.Errorf("holds %q, which climbs out of the image", n)
		}
	}
	switch hdr.Typeflag {
	case tar.TypeChar, tar.TypeBlock:
		return fmt.Errorf("holds the device %q", hdr.Name)
	}
	return nil
}

// checkImportBatch checks the batch as a whole against itself and this
// engine, before anything is loaded: a snapshot twice holds the same
// layers; one already held here (by its tag) holds them too and is marked
// already; the layers an archive leaves out are the bottom of its base's,
// in the batch or on this engine. It gives the snapshots to load, each
// after its base.
func (b *Moves) checkImportBatch(ctx context.Context, batch []*stagedImage) ([]*stagedImage, error) {
	byID := map[string]*stagedImage{}
	var unique []*stagedImage
	for _, s := range batch {
		if o := byID[s.info.ID]; o != nil {
			if !slices.Equal(o.info.Layers, s.info.Layers) {
				return nil, importRefused("Archives %d and %d both hold snapshot %s, with different layers", o.position, s.position, s.info.ID)
			}
			s.already = o.already
			continue
		}
		byID[s.info.ID] = s
		held, err := b.heldLayers(ctx, s.info.ID)
		if err != nil {
			return nil, err
		}
		if held != nil {
			if !slices.Equal(held, s.info.Layers) {
				return nil, importRefused("Snapshot %s (archive %d) is already held on this Docker engine with different layers", s.info.ID, s.position)
			}
			s.already = true
			continue
		}
		unique = append(unique, s)
	}
	for _, s := range unique {
		if s.info.Carried == 0 {
			continue
		}
		if !b.E.LoadsOnLayers(ctx) {
			return nil, importRefused("Snapshot %s (archive %d) leaves out the layers of its base %s, and this Docker engine keeps images in containerd's store, which loads an image only with all its layers: export it again without a base", s.info.ID, s.position, s.info.Base)
		}
		need := s.info.Layers[:s.info.Carried]
		if base := byID[s.info.Base]; base != nil {
			if !slices.Equal(base.info.Layers[:min(len(base.info.Layers), len(need))], need) {
				return nil, importRefused("Snapshot %s (archive %d) leaves out layers its base %s (archive %d) does not hold", s.info.ID, s.position, base.info.ID, base.position)
			}
			continue
		}
		held, err := b.heldLayers(ctx, s.info.Base)
		if err != nil {
			return nil, err
		}
		if held == nil || !slices.Equal(held[:min(len(held), len(need))], need) {
			return nil, importRefused("Snapshot %s (archive %d) leaves out the layers of its base %s, which neither the batch nor this Docker engine holds: add the archive of its base to the batch", s.info.ID, s.position, s.info.Base)
		}
	}
	// Each after its base: a base in the batch is loaded first.
	var ordered []*stagedImage
	done := map[string]bool{}
	for len(ordered) < len(unique) {
		progress := false
		for _, s := range unique {
			if done[s.info.ID] {
				continue
			}
			if base := byID[s.info.Base]; s.info.Carried > 0 && base != nil && !base.already && !done[base.info.ID] {
				continue
			}
			done[s.info.ID] = true
			ordered = append(ordered, s)
			progress = true
		}
		if !progress {
			return nil, importRefused("The batch's archives leave out each other's layers in a circle")
		}
	}
	return ordered, nil
}

// checkImportRoom checks the engine's data root before anything is
// loaded: layers it has no room for are refused, and so are layers that
// take it past roomPercent full (0: only what does not fit). Where the
// engine's room is not known (a remote engine), the engine's own full
// disk is what refuses.
func (b *Moves) checkImportRoom(ctx context.Context, roomPercent int, ordered []*stagedImage) error {
	var used int64
	for _, s := range ordered {
		for _, f := range s.layers {
			if fi, err := f.Stat(); err == nil {
				used += fi.Size()
			}
		}
	}
	if used == 0 {
		return nil
	}
	st, err := b.E.Room(ctx)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if st.FreeBytes <= 0 {
		return nil
	}
	if used > st.FreeBytes {
		return importRefused("The Docker engine's data root has %s free and these snapshots' layers need about %s", providers.GB(st.FreeBytes), providers.GB(used))
	}
	if roomPercent > 0 && st.PercentFull < 100 {
		total := float64(st.FreeBytes) / (1 - st.PercentFull/100)
		after := st.PercentFull + 100*float64(used)/total
		if after > float64(roomPercent) {
			return importRefused("With its %s of layers the Docker engine's data root would be %.0f%% full, past the %d%% at which new snapshots are refused",
				providers.GB(used), after, roomPercent)
		}
	}
	return nil
}

// heldLayers gives the layers of the snapshot's image on this engine, or
// nil when it has none.
func (b *Moves) heldLayers(ctx context.Context, snap string) ([]string, error) {
	cctx, cancel := short(ctx)
	defer cancel()
	img, err := b.E.Client().ImageInspect(cctx, b.E.SnapImage(snap))
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read the snapshot %s's image: %w", snap, err)
	}
	if len(img.RootFS.Layers) == 0 {
		return nil, nil
	}
	return img.RootFS.Layers, nil
}

// loadBatch loads each image untagged, in order, and then tags them all;
// a load or a tag that fails removes every image it loaded, tags and all
// (they are new: an image's config names its snapshot).
func (b *Moves) loadBatch(ctx context.Context, ordered []*stagedImage, group string) error {
	ok := false
	defer func() {
		if ok {
			return
		}
		rctx, cancel := short(context.WithoutCancel(ctx))
		defer cancel()
		for _, s := range ordered {
			if s.loaded != "" {
				_, _ = b.E.Client().ImageRemove(rctx, s.loaded, client.ImageRemoveOptions{Force: true})
			}
		}
	}()
	for _, s := range ordered {
		if err := b.loadStaged(ctx, s, group); err != nil {
			return err
		}
	}
	for _, s := range ordered {
		cctx, cancel := short(ctx)
		_, err := b.E.Client().ImageTag(cctx, client.ImageTagOptions{Source: s.loaded, Target: b.E.SnapImage(s.info.ID)})
		cancel()
		if err != nil {
			return fmt.Errorf("tag the imported snapshot %s: %w", s.info.ID, err)
		}
	}
	ok = true
	return nil
}

// loadStaged loads one staged archive as an untagged image of this
// install's box group (POST /images/load): its config is written here, its
// labels this install's, and the layers it leaves out are named without
// content, as the engine holds them.
func (b *Moves) loadStaged(ctx context.Context, s *stagedImage, group string) error {
	info := s.info
	labels := b.E.Labels(group, Described{Snapshot: info.ID, TakenAt: info.TakenAt, ResetVersion: info.ResetVersion, VolumeIn: info.VolumeIn})
	cfg := container.Config{Cmd: info.Config.Cmd, Entrypoint: info.Config.Entrypoint, Env: info.Config.Env, User: info.Config.User,
		WorkingDir: info.Config.WorkingDir, StopSignal: info.Config.StopSignal, Labels: labels}
	config, err := json.Marshal(map[string]any{"architecture": info.Architecture, "os": info.OS, "created": info.TakenAt.UTC(),
		"config": cfg, "rootfs": map[string]any{"type": "layers", "diff_ids": info.Layers}})
	if err != nil {
		return fmt.Errorf("write the imported image's config: %w", err)
	}
	sum := sha256.Sum256(config)
	configName := hex.EncodeToString(sum[:]) + ".json"
	var names []string
	for i := range info.Layers {
		if i < info.Carried {
			names = append(names, fmt.Sprintf("base-%d/layer.tar", i)) // the engine has it: never read
		} else {
			names = append(names, fmt.Sprintf("layer-%d/layer.tar", i))
		}
	}
	manifest, err := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{}, "Layers": names}})
	if err != nil {
		return fmt.Errorf("write the imported image's manifest: %w", err)
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		var err error
		for i, f := range s.layers {
			if err = TarFile(tw, fmt.Sprintf("layer-%d/layer.tar", info.Carried+i), f); err != nil {
				break
			}
		}
		for _, m := range []struct {
			name string
			data []byte
		}{{configName, config}, {"manifest.json", manifest}} {
			if err != nil {
				break
			}
			if err = tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.data))}); err == nil {
				_, err = tw.Write(m.data)
			}
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	if err := b.E.Load(ctx, pr, "the imported snapshot "+info.ID); err != nil {
		_ = pr.CloseWithError(err)
		return err
	}
	s.loaded = "sha256:" + hex.EncodeToString(sum[:])
	cctx, cancel := short(ctx)
	defer cancel()
	if _, err := b.E.Client().ImageInspect(cctx, s.loaded); err != nil {
		return fmt.Errorf("read the imported snapshot %s's image: %w", info.ID, err)
	}
	return nil
}

package docker_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
	"github.com/boxsnap/boxsnap/providers/docker/dockertest"
	"github.com/boxsnap/boxsnap/providers/providertest"
)

// otherInstall is the install an import brings snapshots to.
const otherInstall = "in7otherinstal2"

// otherEngine starts a second private dockerd, the other install's, and
// gives a backend of that install on it: an image's tag names its
// snapshot's ID, so two installs never share an engine's snapshots.
func otherEngine(t *testing.T) *docker.Backend {
	t.Helper()
	dockertest.Host(t) // skips where dockerd cannot start
	d, err := dockertest.Start(os.TempDir())
	if err != nil {
		t.Fatalf("start the other install's dockerd: %v", err)
	}
	t.Cleanup(d.Stop)
	b, err := docker.New(docker.Config{ID: "docker", Host: d.Host, Install: otherInstall, Network: "none", CopierBinary: dockertest.Busybox})
	must(t, err)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// archiveMeta reads an archive's description.
func archiveMeta(t *testing.T, archive []byte) map[string]any {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	must(t, err)
	tr := tar.NewReader(zr)
	hdr, err := tr.Next()
	must(t, err)
	if hdr.Name != "boxsnap-archive.json" {
		t.Fatalf("the archive begins with %s", hdr.Name)
	}
	var m map[string]any
	must(t, json.NewDecoder(tr).Decode(&m))
	return m
}

func export(t *testing.T, b *docker.Backend, ref providers.SnapshotRef, opts providers.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	must(t, b.ExportSnapshot(context.Background(), ref, opts, &buf))
	return buf.Bytes()
}

func readers(archives ...[]byte) []io.Reader {
	var out []io.Reader
	for _, a := range archives {
		out = append(out, bytes.NewReader(a))
	}
	return out
}

// TestDockerExportImportWithAncestry: a chain of two snapshots is exported,
// the second incrementally against the first (only the layers above the
// bottom they share); the incremental archive alone is refused where the
// other install lacks its base, and nothing is imported; the two together,
// in any order, import into the other install's engine with their
// ancestry, and a fork of the imported tip holds the files byte-exact, in
// the container's layer and in its volume.
func TestDockerExportImportWithAncestry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	blob := make([]byte, 2<<20)
	_, _ = rand.Read(blob)
	writeFile(t, b, g, "/blob.bin", string(blob))
	writeFile(t, b, g, docker.DefaultVolumePath+"/blob.bin", string(blob))
	writeState(t, b, g, "first")
	first := take(t, b, g, box)
	writeState(t, b, g, "second")
	second := take(t, b, g, box)

	full := export(t, b, first, providers.ExportOptions{Name: "first"})
	incr := export(t, b, second, providers.ExportOptions{Name: "second", Base: &first, Parent: first.ID})
	if m := archiveMeta(t, incr); m["base"] != first.ID || m["carried"].(float64) < 1 {
		t.Fatalf("the second archive is not incremental against the first: base %v, carried from layer %v", m["base"], m["carried"])
	}
	if len(incr) >= len(full)/4 {
		t.Fatalf("the incremental archive is %d bytes, the full one %d: it carries what its base holds", len(incr), len(full))
	}

	other := otherEngine(t)
	group := box
	_, err := other.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, readers(incr))
	var re *providers.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Why, "neither the batch nor this Docker engine holds") || !strings.Contains(re.Why, "Nothing was imported") {
		t.Fatalf("an incremental archive without its base: %v; want a refusal naming the missing base", err)
	}
	if list, err := other.HeldSnapshots(ctx); err != nil || len(list) != 0 {
		t.Fatalf("after the refusal the other engine holds %v (%v)", list, err)
	}

	// An engine on containerd's image store wants every layer's content.
	other.TakeVolumeCopies(true)
	_, err = other.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, readers(incr, full))
	if !errors.As(err, &re) || !strings.Contains(re.Why, "containerd's store") {
		t.Fatalf("an incremental archive on an engine that wants every layer: %v; want a refusal saying why", err)
	}
	other.TakeVolumeCopies(false)

	got, err := other.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, readers(incr, full))
	must(t, err)
	parents := map[string]string{}
	for _, s := range got {
		parents[s.Ref.ID] = s.Parent
	}
	if len(got) != 2 || parents[second.ID] != first.ID || parents[first.ID] != "" {
		t.Fatalf("imported %+v; want %s and %s, the second's parent the first", got, first.ID, second.ID)
	}
	list, err := other.HeldSnapshots(ctx)
	must(t, err)
	if len(list) != 2 {
		t.Fatalf("the other engine lists %d snapshots, want 2", len(list))
	}
	for _, h := range list {
		if h.Incomplete || h.Label.Install != otherInstall || h.Label.Box != group {
			t.Fatalf("an imported snapshot is listed as %+v", h)
		}
	}
	// Importing the same again changes nothing; one twice in a batch is
	// answered once.
	again, err := other.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, readers(full, incr, full))
	must(t, err)
	if len(again) != 2 {
		t.Fatalf("a batch holding the first twice answered %d snapshots, want 2", len(again))
	}
	for _, s := range again {
		if !s.Already {
			t.Fatalf("a second import of %s published it again", s.Ref.ID)
		}
	}

	var tip providers.SnapshotRef
	for _, s := range got {
		if s.Ref.ID == second.ID {
			tip = s.Ref
		}
	}
	forkID := providertest.NewID("bx")
	fg, err := other.ForkSnapshot(ctx, tip, providers.BoxIdentity{ID: forkID, Name: "fork", Kind: docker.KindLinux, Install: otherInstall}, nil)
	must(t, err)
	t.Cleanup(func() { _ = other.Release(context.Background(), fg) })
	must(t, other.Start(ctx, fg))
	if got := readState(t, other, fg); got != "second" {
		t.Fatalf("the fork of the imported snapshot holds %q, want %q", got, "second")
	}
	for _, p := range []string{"/blob.bin", docker.DefaultVolumePath + "/blob.bin"} {
		if got := readFile(t, other, fg, p); got != string(blob) {
			t.Fatalf("the fork's %s is %d bytes and differs from the box's %d", p, len(got), len(blob))
		}
	}
}

// TestDockerShareScrubbed: a share copy leaves out the box's access file,
// its sign-in files in every home and every .env, and names them in its
// report; the copy, imported on the other install and forked, holds none
// of them, and keeps the rest; a copy that would still hold a credential
// is refused.
func TestDockerShareScrubbed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	put := func(p, content string) {
		t.Helper()
		must(t, b.WriteBoxFile(ctx, g, strings.TrimPrefix(p, "/"), []byte(content), 0o600))
	}
	put("/.boxsnap/env", "BOXSNAP_TOKEN=bst_4fJq9ZpLk2xV7mNc8RtY3wHs\n")
	put("/root/.ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n")
	put("/srv/app/.env", "DATABASE_PASSWORD=k2P9xLq7Zr4Vw8Nc\n")
	writeFile(t, b, g, docker.DefaultVolumePath+"/.git-credentials", "https://u:ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8@github.com\n")
	writeState(t, b, g, "shared")
	ref := take(t, b, g, box)

	sec := providers.DefaultSecrets()
	rep, err := b.Scrub(ctx, ref, sec)
	must(t, err)
	for _, p := range []string{".boxsnap/env", "root/.ssh", "srv/app/.env", strings.TrimPrefix(docker.DefaultVolumePath, "/") + "/.git-credentials"} {
		found := false
		for _, r := range rep.Removed {
			found = found || r == p
		}
		if !found {
			t.Fatalf("the scrub's report removes %v, not %s", rep.Removed, p)
		}
	}
	if len(rep.Blocked) != 0 {
		t.Fatalf("the scrub blocks %v", rep.Blocked)
	}
	copyID := providertest.NewID("sn")
	archive := export(t, b, ref, providers.ExportOptions{Scrub: &sec, AsID: copyID, Name: "shared"})

	other := otherEngine(t)
	group := providertest.NewID("bx")
	got, err := other.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, readers(archive))
	must(t, err)
	if len(got) != 1 || got[0].Ref.ID != copyID || got[0].Parent != "" {
		t.Fatalf("imported %+v; want the copy %s alone, with no parent", got, copyID)
	}
	fg, err := other.ForkSnapshot(ctx, got[0].Ref, providers.BoxIdentity{ID: providertest.NewID("bx"), Name: "fork", Kind: docker.KindLinux, Install: otherInstall}, nil)
	must(t, err)
	t.Cleanup(func() { _ = other.Release(context.Background(), fg) })
	must(t, other.Start(ctx, fg))
	if got := readState(t, other, fg); got != "shared" {
		t.Fatalf("the copy's fork holds %q", got)
	}
	for _, p := range []string{"/.boxsnap/env", "/root/.ssh/id_ed25519", "/srv/app/.env", docker.DefaultVolumePath + "/.git-credentials"} {
		if got := readFile(t, other, fg, p); got != "" {
			t.Fatalf("the shared copy still holds %s: %q", p, got)
		}
	}

	// A credential outside what the scrub removes blocks the copy.
	put("/srv/app/config.yml", "token: ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2\n")
	leaky := take(t, b, g, box)
	var buf bytes.Buffer
	err = b.ExportSnapshot(ctx, leaky, providers.ExportOptions{Scrub: &sec, AsID: providertest.NewID("sn")}, &buf)
	var be *providers.BlockedError
	if !errors.As(err, &be) || len(be.Blocked) == 0 || be.Blocked[0].Path != "srv/app/config.yml" || buf.Len() != 0 {
		t.Fatalf("a copy holding a token: %v (%d bytes written); want it blocked at srv/app/config.yml", err, buf.Len())
	}
}

// TestDockerExportVolumeCopy: a snapshot whose volume is a copy of its own
// (taken before the volume went into the image) exports that copy as a
// layer of its image, so the other install's fork holds its volume.
func TestDockerExportVolumeCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	b.TakeVolumeCopies(true)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	writeState(t, b, g, "copied")
	long := docker.DefaultVolumePath + "/" + strings.Repeat("n", 150) // a name the tar holds in a PAX record
	writeFile(t, b, g, long, "long")
	ref := take(t, b, g, box)
	archive := export(t, b, ref, providers.ExportOptions{})
	if m := archiveMeta(t, archive); m["volumeIn"] != docker.DefaultVolumePath {
		t.Fatalf("the archive holds its volume at %v", m["volumeIn"])
	}
	other := otherEngine(t)
	got, err := other.ImportSnapshots(ctx, providers.ImportOptions{Group: box}, readers(archive))
	must(t, err)
	fg, err := other.ForkSnapshot(ctx, got[0].Ref, providers.BoxIdentity{ID: providertest.NewID("bx"), Name: "fork", Kind: docker.KindLinux, Install: otherInstall}, nil)
	must(t, err)
	t.Cleanup(func() { _ = other.Release(context.Background(), fg) })
	must(t, other.Start(ctx, fg))
	if got := readState(t, other, fg); got != "copied" {
		t.Fatalf("the fork of the imported snapshot holds %q", got)
	}
	if got := readFile(t, other, fg, long); got != "long" {
		t.Fatalf("the fork's file of a long name holds %q", got)
	}
}

// handMadeArchive is an archive of one snapshot whose one layer is the tar
// entries given, named by its true diff ID, so that only what the layer
// holds is wrong.
func handMadeArchive(t *testing.T, id string, entries ...*tar.Header) []byte {
	t.Helper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	for _, h := range entries {
		must(t, tw.WriteHeader(h))
		if h.Size > 0 {
			_, err := tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
			must(t, err)
		}
	}
	must(t, tw.Close())
	sum := sha256.Sum256(layer.Bytes())
	diffID := "sha256:" + hex.EncodeToString(sum[:])
	meta, err := json.Marshal(map[string]any{"format": 1, "kind": "docker-image", "id": id, "name": id, "takenAt": time.Now().UTC(),
		"volumeIn": docker.DefaultVolumePath, "architecture": "amd64", "os": "linux", "config": map[string]any{"cmd": []string{"/bin/sh"}},
		"layers": []string{diffID}, "carried": 0})
	must(t, err)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	aw := tar.NewWriter(zw)
	must(t, aw.WriteHeader(&tar.Header{Name: "boxsnap-archive.json", Mode: 0o600, Size: int64(len(meta)), Typeflag: tar.TypeReg}))
	_, _ = aw.Write(meta)
	must(t, aw.WriteHeader(&tar.Header{Name: "layers/" + strings.TrimPrefix(diffID, "sha256:") + ".tar", Mode: 0o444, Size: int64(layer.Len()), Typeflag: tar.TypeReg}))
	_, _ = aw.Write(layer.Bytes())
	must(t, aw.Close())
	must(t, zw.Close())
	return out.Bytes()
}

// TestDockerImportRefusesHostileArchives: an archive is another install's
// word, read as hostile: a layer whose names climb out of the image or
// start at /, a hard link that climbs, a device, a layer whose bytes are
// not its diff ID, and a description naming a path for an ID are each
// refused in words, and nothing is imported, in a batch beside a good
// archive too.
func TestDockerImportRefusesHostileArchives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	group := providertest.NewID("bx")
	file := func(name string) *tar.Header {
		return &tar.Header{Name: name, Mode: 0o644, Size: 4, Typeflag: tar.TypeReg}
	}
	good := handMadeArchive(t, providertest.NewID("sn"), &tar.Header{Name: "srv/", Mode: 0o755, Typeflag: tar.TypeDir}, file("srv/ok.txt"))
	tampered := handMadeArchive(t, providertest.NewID("sn"), file("srv/a.txt"))
	tampered[len(tampered)-30] ^= 0xff // inside the gzip's stream: a cut or a changed byte
	cases := []struct {
		name    string
		archive []byte
		words   string
	}{
		{"a name climbing", handMadeArchive(t, providertest.NewID("sn"), file("srv/../../etc/cron.d/x")), "climbs out of the image"},
		{"a name from /", handMadeArchive(t, providertest.NewID("sn"), file("/etc/passwd")), "climbs out of the image"},
		{"a hard link climbing", handMadeArchive(t, providertest.NewID("sn"), file("srv/a"), &tar.Header{Name: "srv/b", Linkname: "../../etc/shadow", Typeflag: tar.TypeLink}), "climbs out of the image"},
		{"a device", handMadeArchive(t, providertest.NewID("sn"), &tar.Header{Name: "dev/sda", Typeflag: tar.TypeBlock, Devmajor: 8, Mode: 0o600}), "holds the device"},
		{"an ID that is a path", handMadeArchive(t, "../../x", file("srv/a")), "no valid snapshot ID"},
		{"a damaged archive", tampered, "Archive 2 of the batch"},
	}
	for _, c := range cases {
		_, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, readers(good, c.archive))
		var re *providers.RefusedError
		if !errors.As(err, &re) || !strings.Contains(re.Why, c.words) || !strings.Contains(re.Why, "Nothing was imported") {
			t.Fatalf("%s: %v; want a refusal saying %q", c.name, err, c.words)
		}
		if list, err := b.HeldSnapshots(ctx); err != nil {
			t.Fatal(err)
		} else {
			for _, h := range list {
				if h.Label.Box == group {
					t.Fatalf("%s: the refused batch left %s", c.name, h.Label.Snapshot)
				}
			}
		}
	}
	got, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: group}, readers(good))
	must(t, err)
	if len(got) != 1 {
		t.Fatalf("the good archive alone imported %+v", got)
	}
}

// TestDockerImportRespectsRoom: an import that would take the engine's
// data root past the room setting is refused before anything is loaded.
func TestDockerImportRespectsRoom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	group := providertest.NewID("bx")
	archive := handMadeArchive(t, providertest.NewID("sn"), &tar.Header{Name: "srv/ok.txt", Mode: 0o644, Size: 4, Typeflag: tar.TypeReg})
	_, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: group, RoomPercent: 1}, readers(archive))
	var re *providers.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Why, "past the 1% at which new snapshots are refused") {
		t.Fatalf("an import past the room setting: %v", err)
	}
	list, err := b.HeldSnapshots(ctx)
	must(t, err)
	for _, h := range list {
		if h.Label.Box == group {
			t.Fatalf("the refused import left %s", h.Label.Snapshot)
		}
	}
}

// TestDockerImportRefusesABrokenArchive: an archive an export wrote,
// broken on its way (empty, not gzip, cut short in its description, in a
// layer or in its last bytes, a byte flipped in a layer's compressed bytes
// or in its check sum, bytes after its end), is refused in words that say
// what is wrong with the file, never a library's, and changes nothing: no
// image of the snapshot on the engine, no layer file left in the temporary
// folder. The whole archive is then imported. It sets TMPDIR (once its
// dockerd runs), so it runs alone.
func TestDockerImportRefusesABrokenArchive(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	box := providertest.NewID("bx")
	g := newGuest(t, b, box)
	var notes strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&notes, "line %d of the box's notes: %d apples, %d pears\n", i, i*7%113, i*13%97)
	}
	writeFile(t, b, g, "/notes.txt", notes.String())
	writeFile(t, b, g, docker.DefaultVolumePath+"/notes.txt", notes.String())
	ref := take(t, b, g, box)
	whole := export(t, b, ref, providers.ExportOptions{Name: "notes"})
	must(t, b.DeleteSnapshot(ctx, ref, nil))
	if n := snapshotImages(t, b, ref.ID); n != 0 {
		t.Fatalf("the deleted snapshot has %d images", n)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, c := range providertest.BrokenArchives(t, whole, "layers/") {
		t.Run(c.Name, func(t *testing.T) {
			_, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: box}, readers(c.Bytes))
			providertest.RefusedInWords(t, err, c.Words)
			if err != nil && !strings.HasPrefix(err.Error(), "Archive 1 of the batch: ") {
				t.Errorf("the refusal %q does not name the archive", err)
			}
			if n := snapshotImages(t, b, ref.ID); n != 0 {
				t.Errorf("the refused import left %d images of the snapshot", n)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("the refused import left %s in the temporary folder", left[0].Name())
			}
		})
	}
	got, err := b.ImportSnapshots(ctx, providers.ImportOptions{Group: box}, readers(whole))
	if err != nil || len(got) != 1 || got[0].Ref.ID != ref.ID || got[0].Already {
		t.Fatalf("the whole archive imported %+v, %v", got, err)
	}
}

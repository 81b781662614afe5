package docker_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker"
)

// put is one entry written into a box's container by putTar.
type put struct {
	name, content, target string
	kind                  byte
}

// putTar writes entries under dir (which must exist) in the box's
// container, as the engine unpacks a tar there.
func putTar(t testing.TB, b *docker.Backend, g providers.Guest, dir string, entries ...put) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: e.kind, Size: int64(len(e.content)), Linkname: e.target}
		switch e.kind {
		case 0:
			h.Typeflag = tar.TypeReg
		case tar.TypeDir:
			h.Mode, h.Size = 0o755, 0
		case tar.TypeSymlink, tar.TypeFifo:
			h.Size = 0
		}
		must(t, tw.WriteHeader(h))
		_, err := tw.Write([]byte(e.content))
		must(t, err)
	}
	must(t, tw.Close())
	_, err := b.Client().CopyToContainer(context.Background(), g.Ref, client.CopyToContainerOptions{DestinationPath: dir, Content: &buf})
	must(t, err)
}

// refused fails unless err is a RefusedError whose words hold want.
func refused(t testing.TB, what string, err error, want string) {
	t.Helper()
	var r *providers.RefusedError
	if !errors.As(err, &r) || !strings.Contains(r.Why, want) {
		t.Fatalf("%s: got %v, want a refusal saying %q", what, err, want)
	}
}

// noLooks fails when a look container of one of the snapshots is left on
// the engine.
func noLooks(t testing.TB, b *docker.Backend, snaps ...string) {
	t.Helper()
	for _, snap := range snaps {
		f := client.Filters{}.Add("label", "boxsnap.role=look", "boxsnap.snapshot="+snap)
		list, err := b.Client().ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: f})
		must(t, err)
		if len(list.Items) > 0 {
			t.Fatalf("%d look containers of %s are left after the looks ended", len(list.Items), snap)
		}
	}
}

func changesOf(cs []providers.FileChange) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Change+" "+c.Type+" "+c.Path)
	}
	return out
}

// TestDockerBrowseAndCompare looks inside Docker snapshots as inside local
// ones: a folder of the container's layer and one of its volume's copy are
// listed, a file read, a text file compared with the box now and with
// another snapshot, and the paths added, removed and changed listed; a link
// is reported and never followed, a named pipe is "other" and never read,
// and a path that climbs with ".." or goes through a link is refused.
func TestDockerBrowseAndCompare(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	g := newGuest(t, b, "looksbox1")
	writeState(t, b, g, "one")
	deep := []put{{name: "data/", kind: tar.TypeDir}}
	deepest := "data/deep"
	for i := range 200 {
		if i > 0 {
			deepest += "/d"
		}
		deep = append(deep, put{name: deepest + "/", kind: tar.TypeDir})
	}
	deep = append(deep, put{name: deepest + "/bottom.txt", content: "the bottom\n"})
	putTar(t, b, g, "/", deep...)
	putTar(t, b, g, "/", put{name: "data/notes.txt", content: "line 1\nline 2\nline 3\n"},
		put{name: "data/..hidden", content: "a name that starts with two dots\n"},
		put{name: "data/up", kind: tar.TypeSymlink, target: "../etc"},
		put{name: "data/abs", kind: tar.TypeSymlink, target: "/etc/passwd"},
		put{name: "data/pipe", kind: tar.TypeFifo},
		put{name: "data/big.txt", content: strings.Repeat("x", providers.MaxDiffBytes+1)})
	writeFile(t, b, g, docker.DefaultVolumePath+"/vol.txt", "in the volume\n")
	one := take(t, b, g, "looksbox1")

	es, err := b.ListFiles(ctx, one, "data")
	must(t, err)
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprintf("%s %s %d %s", e.Path, e.Type, e.Size, e.Target))
	}
	want := []string{"data/..hidden file 33 ", "data/abs link 0 /etc/passwd", fmt.Sprintf("data/big.txt file %d ", providers.MaxDiffBytes+1),
		"data/deep dir 0 ", "data/notes.txt file 21 ", "data/pipe other 0 ", "data/up link 0 ../etc"}
	if !slices.Equal(got, want) {
		t.Fatalf("the snapshot's data folder lists\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	es, err = b.ListFiles(ctx, one, "/var/lib/docker")
	must(t, err)
	if !slices.ContainsFunc(es, func(e providers.FileEntry) bool { return e.Path == "var/lib/docker/vol.txt" && e.Size == 14 }) {
		t.Fatalf("the snapshot's volume copy lists %+v, without vol.txt", es)
	}
	top, err := b.ListFiles(ctx, one, "")
	must(t, err)
	if !slices.ContainsFunc(top, func(e providers.FileEntry) bool { return e.Path == "data" && e.Type == "dir" }) {
		t.Fatalf("the snapshot's top folder lists %+v, without data", top)
	}
	es, err = b.ListFiles(ctx, one, deepest)
	must(t, err)
	if len(es) != 1 || es[0].Path != deepest+"/bottom.txt" {
		t.Fatalf("the bottom of a tree 200 folders deep lists %+v", es)
	}
	var buf bytes.Buffer
	e, err := b.ReadFile(ctx, one, "data/notes.txt", &buf)
	must(t, err)
	if buf.String() != "line 1\nline 2\nline 3\n" || e.Size != 21 || e.Type != "file" {
		t.Fatalf("read %+v %q", e, buf.String())
	}
	buf.Reset()
	_, err = b.ReadFile(ctx, one, "data/..hidden", &buf)
	must(t, err)

	// Hostile paths and kinds.
	_, err = b.ReadFile(ctx, one, "data/up/passwd", io.Discard)
	refused(t, "a read through a link", err, "goes through a link (data/up)")
	_, err = b.ListFiles(ctx, one, "data/up")
	refused(t, "a listing of a link", err, "is a link to")
	_, err = b.ReadFile(ctx, one, "data/abs", io.Discard)
	refused(t, "a read of an absolute link", err, "never followed")
	_, err = b.ReadFile(ctx, one, "data/pipe", io.Discard)
	refused(t, "a read of a named pipe", err, "is not a file")
	for _, p := range []string{"../etc/passwd", "data/../../etc/passwd", "/.."} {
		_, err = b.ReadFile(ctx, one, p, io.Discard)
		refused(t, "a read of "+p, err, "climbs out of the box")
		_, err = b.ListFiles(ctx, one, p)
		refused(t, "a listing of "+p, err, "climbs out of the box")
	}
	_, err = b.DiffFile(ctx, one, nil, "data/big.txt")
	refused(t, "a comparison of a big file", err, "a comparison allows")
	if _, err := b.ReadFile(ctx, one, "data/gone.txt", io.Discard); !errors.Is(err, providers.ErrNotFound) {
		t.Fatalf("a read of a missing file: %v", err)
	}

	// Compare with now, then with another snapshot.
	if cs, err := b.CompareFiles(ctx, one, nil); err != nil || len(cs) != 0 {
		t.Fatalf("a box unchanged since its snapshot compares as %v, %v", changesOf(cs), err)
	}
	putTar(t, b, g, "/data", put{name: "notes.txt", content: "line 1\nchanged\nline 3\n"}, put{name: "new.txt", content: "new\n"})
	d, err := b.DiffFile(ctx, one, nil, "data/notes.txt")
	must(t, err)
	wantDiff := "--- a/data/notes.txt\n+++ b/data/notes.txt\n@@ -1,3 +1,3 @@\n line 1\n-line 2\n+changed\n line 3\n"
	if d != wantDiff {
		t.Fatalf("the diff with now is\n%s\nwant\n%s", d, wantDiff)
	}
	two := take(t, b, g, "looksbox1")
	d, err = b.DiffFile(ctx, one, &two, "data/notes.txt")
	must(t, err)
	if d != wantDiff {
		t.Fatalf("the diff with the other snapshot is\n%s\nwant\n%s", d, wantDiff)
	}
	cs, err := b.CompareFiles(ctx, one, &two)
	must(t, err)
	if got, want := changesOf(cs), []string{"added file data/new.txt", "changed file data/notes.txt"}; !slices.Equal(got, want) {
		t.Fatalf("the snapshots compare as %q, want %q", got, want)
	}
	cs, err = b.CompareFiles(ctx, two, &one)
	must(t, err)
	if got, want := changesOf(cs), []string{"removed file data/new.txt", "changed file data/notes.txt"}; !slices.Equal(got, want) {
		t.Fatalf("the snapshots compare the other way as %q, want %q", got, want)
	}
	if *cs[1].Before != 22 || *cs[1].After != 21 {
		t.Fatalf("the changed file's sizes are %d then %d", *cs[1].Before, *cs[1].After)
	}
	cs, err = b.CompareFiles(ctx, one, nil)
	must(t, err)
	if got, want := changesOf(cs), []string{"added file data/new.txt", "changed file data/notes.txt"}; !slices.Equal(got, want) {
		t.Fatalf("the snapshot compares with now as %q, want %q", got, want)
	}
	noLooks(t, b, one.Ref, two.Ref)
}

// TestDockerDownloadFolderStreams downloads a folder of a Docker snapshot
// as the contents seam does (a tar.gz written entry by entry from
// WalkFiles, each file through OpenFile) and finds the right files in it,
// while the server allocates far less than the folder holds; its file past
// the bound of a read (MaxReadBytes) downloads whole but is never read.
func TestDockerDownloadFolderStreams(t *testing.T) {
	ctx := context.Background()
	b := newBackend(t)
	g := newGuest(t, b, "looksbox2")
	const bigSize = providers.MaxReadBytes + 1<<20
	big := make([]byte, bigSize)
	_, _ = rand.Read(big)
	putTar(t, b, g, "/", put{name: "data/", kind: tar.TypeDir}, put{name: "data/sub/", kind: tar.TypeDir},
		put{name: "data/big.bin", content: string(big)}, put{name: "data/sub/a.txt", content: "a\n"},
		put{name: "data/link", kind: tar.TypeSymlink, target: "/etc"})
	writeFile(t, b, g, docker.DefaultVolumePath+"/v.txt", "volume\n")
	wantBig := sha256.Sum256(big)
	big = nil
	snap := take(t, b, g, "looksbox2")

	for _, c := range []struct {
		dir  string
		want []string
	}{
		{"data", []string{"data/", "data/big.bin", "data/link", "data/sub/", "data/sub/a.txt"}},
		{"var/lib/docker", []string{"docker/", "docker/v.txt"}},
	} {
		pr, pw := io.Pipe()
		type read struct {
			names []string
			sums  map[string][32]byte
			err   error
		}
		done := make(chan read, 1)
		go func() {
			r := read{sums: map[string][32]byte{}}
			defer func() { _, _ = io.Copy(io.Discard, pr); done <- r }()
			zr, err := gzip.NewReader(pr)
			if err != nil {
				r.err = err
				return
			}
			tr := tar.NewReader(zr)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					return
				}
				if err != nil {
					r.err = err
					return
				}
				r.names = append(r.names, h.Name)
				sum := sha256.New()
				_, _ = io.Copy(sum, tr)
				r.sums[h.Name] = [32]byte(sum.Sum(nil))
			}
		}()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := download(ctx, b, snap, c.dir, pw)
		runtime.ReadMemStats(&after)
		_ = pw.CloseWithError(err)
		must(t, err)
		r := <-done
		must(t, r.err)
		slices.Sort(r.names)
		if !slices.Equal(r.names, c.want) {
			t.Fatalf("the download of %s holds %q, want %q", c.dir, r.names, c.want)
		}
		if c.dir == "data" {
			if r.sums["data/big.bin"] != wantBig {
				t.Fatal("the downloaded big.bin is not the file the box held")
			}
			// Every byte the process allocated while it streamed, garbage
			// or not: a file held whole would be counted once at least.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > bigSize/4 {
				t.Fatalf("%d bytes were allocated while a folder holding %d streamed", grew, bigSize)
			} else {
				t.Logf("%d bytes were allocated while a folder holding %d streamed", grew, bigSize)
			}
		}
	}
	// A file past the bound of a read is refused before its content is
	// read: it downloads only.
	_, err := b.ReadFile(ctx, snap, "data/big.bin", io.Discard)
	refused(t, "a read of a file past the bound", err, "more than the 67 MB this allows")
	noLooks(t, b, snap.Ref)
}

// download writes a folder of a snapshot to w as a tar.gz, as the contents
// seam's Download.WriteTo does.
func download(ctx context.Context, b *docker.Backend, ref providers.SnapshotRef, dir string, w io.Writer) error {
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	top := dir[strings.LastIndex(dir, "/")+1:]
	err := b.WalkFiles(ctx, ref, dir, func(e providers.FileEntry) error {
		name := top + strings.TrimPrefix(e.Path, dir)
		h := &tar.Header{Name: name, Mode: int64(e.Mode), ModTime: e.ModTime, Format: tar.FormatPAX}
		switch e.Type {
		case "dir":
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			return tw.WriteHeader(h)
		case "link":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Target
			return tw.WriteHeader(h)
		case "file":
			h.Typeflag, h.Size = tar.TypeReg, e.Size
			rc, _, err := b.OpenFile(ctx, ref, e.Path)
			if err != nil {
				return err
			}
			defer rc.Close()
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			_, err = io.Copy(tw, rc)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// BenchmarkDockerLook times a look inside a Docker snapshot: a listing of
// a folder of ten small files, a listing of a folder holding 256 MiB, a
// read of a small file, and a comparison of two snapshots of the same box.
func BenchmarkDockerLook(b *testing.B) {
	ctx := context.Background()
	be := newBackend(b)
	g := newGuest(b, be, "lookbench1")
	entries := []put{{name: "small/", kind: tar.TypeDir}, {name: "big/", kind: tar.TypeDir}}
	for i := range 10 {
		entries = append(entries, put{name: fmt.Sprintf("small/f%d.txt", i), content: "a line\n"})
	}
	putTar(b, be, g, "/", entries...)
	chunk := make([]byte, 64<<20)
	_, _ = rand.Read(chunk)
	for i := range 4 {
		putTar(b, be, g, "/big", put{name: fmt.Sprintf("part%d", i), content: string(chunk)})
	}
	chunk = nil
	snap := take(b, be, g, "lookbench1")
	other := take(b, be, g, "lookbench1")
	b.Run("list small folder", func(b *testing.B) {
		for b.Loop() {
			if _, err := be.ListFiles(ctx, snap, "small"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list 256 MiB folder", func(b *testing.B) {
		for b.Loop() {
			if _, err := be.ListFiles(ctx, snap, "big"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read small file", func(b *testing.B) {
		for b.Loop() {
			if _, err := be.ReadFile(ctx, snap, "small/f1.txt", io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("compare two snapshots", func(b *testing.B) {
		for b.Loop() {
			if _, err := be.CompareFiles(ctx, snap, &other); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDockerDeleteRemovesLooks deletes a snapshot while a look inside it
// still holds its look container (as one a killed process left would): the
// delete removes it with the snapshot's copiers, and the volume copy goes.
func TestDockerDeleteRemovesLooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBackend(t)
	g := newGuest(t, b, "looksbox3")
	writeState(t, b, g, "one")
	snap := take(t, b, g, "looksbox3")
	rc, _, err := b.OpenFile(ctx, snap, "state.txt")
	must(t, err)
	defer rc.Close()
	f := client.Filters{}.Add("label", "boxsnap.role=look", "boxsnap.snapshot="+snap.Ref)
	list, err := b.Client().ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	must(t, err)
	if len(list.Items) != 1 {
		t.Fatalf("an open file of the snapshot has %d look containers, want 1", len(list.Items))
	}
	must(t, b.DeleteSnapshot(ctx, snap, nil))
	if _, ok := held(t, b, snap.ID); ok {
		t.Fatal("the deleted snapshot is still held")
	}
	if _, err := b.Client().VolumeInspect(ctx, "boxsnap-"+snap.Ref, client.VolumeInspectOptions{}); err == nil {
		t.Fatal("the deleted snapshot's volume copy is still there")
	}
	noLooks(t, b, snap.Ref)
}

package contents_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/providers"
)

// member is one file of an export file's tar, in order.
type member struct {
	hdr  *tar.Header
	data []byte
	at   int64 // where its data begins in the file
}

// readMembers reads an export file's members.
func readMembers(t *testing.T, file []byte) []member {
	t.Helper()
	r := bytes.NewReader(file)
	tr := tar.NewReader(r)
	var out []member
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		at := int64(len(file)) - int64(r.Len())
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, member{hdr, data, at})
	}
}

// withArchive is an export file whose one snapshot's archive is archive,
// in one part, and whose manifest gives that archive's size and SHA-256:
// whole as an export file, whatever the archive holds.
func withArchive(t *testing.T, file, archive []byte) []byte {
	t.Helper()
	ms := readMembers(t, file)
	var mf contents.ExportManifest
	if err := json.Unmarshal(ms[len(ms)-1].data, &mf); err != nil || len(mf.Snapshots) != 1 {
		t.Fatalf("the export file's manifest: %v, %d snapshots", err, len(mf.Snapshots))
	}
	sum := sha256.Sum256(archive)
	es := &mf.Snapshots[0]
	es.Parts, es.Size, es.SHA256 = 1, int64(len(archive)), hex.EncodeToString(sum[:])
	raw, _ := json.Marshal(mf)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range []struct {
		name string
		data []byte
	}{{"snapshots/" + es.ID + ".tar.gz.0000", archive}, {contents.ExportManifestName, raw}} {
		if err := tw.WriteHeader(&tar.Header{Name: p.name, Mode: 0o644, Size: int64(len(p.data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestImportRefusesABrokenExportFile: an export file broken on its way
// (empty, not an export file, cut short in a snapshot's archive, in its
// manifest, before or in its tar's end, a byte flipped in an archive or in
// a tar header, bytes after its end) is refused by Stage with the code for
// a bad request and words that say what is wrong with the file, never a
// library's; so is a whole export file whose snapshot's archive is broken,
// by the import. Each changes nothing: no box, no snapshot record, nothing
// in the local backend, nothing staged. The whole file is then imported.
// It sets TMPDIR (where Stage stages), so it runs alone.
func TestImportRefusesABrokenExportFile(t *testing.T) {
	ctx := context.Background()
	from := coretest.New(t, coretest.Options{})
	box := from.Box(t, snapshots.Owner(), "amber-fox")
	var notes strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&notes, "line %d of the box's notes: %d apples, %d pears\n", i, i*7%113, i*13%97)
	}
	write(t, filepath.Join(from.Local.BoxDir(providers.Guest{Ref: box.GuestRef}), "notes.txt"), notes.String())
	from.TakeReady(t, snapshots.Owner(), "amber-fox", "notes")
	whole := exportOf(t, from, "amber-fox", "notes")
	ms := readMembers(t, whole)
	part, manifest := ms[0], ms[len(ms)-1]
	if len(ms) != 2 || manifest.hdr.Name != contents.ExportManifestName {
		t.Fatalf("the export file holds %d members, the last %s", len(ms), manifest.hdr.Name)
	}

	to := coretest.New(t, coretest.Options{})
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	nothingChanged := func(t *testing.T) {
		t.Helper()
		var boxes, records int
		if err := to.Pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM boxes), (SELECT count(*) FROM snapshots)").Scan(&boxes, &records); err != nil {
			t.Fatal(err)
		}
		if boxes+records != 0 {
			t.Errorf("the refused import left %d boxes and %d snapshot records", boxes, records)
		}
		if held, err := to.Local.HeldSnapshots(ctx); err != nil || len(held) != 0 {
			t.Errorf("the local backend holds %d snapshots (%v)", len(held), err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("the refused import left %s staged", left[0].Name())
		}
	}
	refused := func(t *testing.T, err error, words []string) {
		t.Helper()
		var r *snapshots.Refusal
		if !errors.As(err, &r) {
			t.Fatalf("answered %v, want a refusal", err)
		}
		if r.Code != snapshots.CodeInvalid {
			t.Errorf("the refusal's code is %s, want %s", r.Code, snapshots.CodeInvalid)
		}
		said := false
		for _, w := range words {
			said = said || strings.Contains(r.Words, w)
		}
		if !said || !strings.Contains(r.Words, "Nothing was imported") {
			t.Errorf("the refusal %q says none of %q, or not that nothing was imported", r.Words, words)
		}
		for _, w := range []string{"EOF", "archive/tar", "invalid tar header", "invalid character", "flate", "gzip:"} {
			if strings.Contains(r.Words, w) {
				t.Errorf("the refusal %q repeats a library's words %q", r.Words, w)
			}
		}
	}
	flip := func(i int64) []byte {
		b := bytes.Clone(whole)
		b[i] ^= 0xff
		return b
	}
	cutShort := []string{"it is cut short: it ends part-way through"}
	damaged := []string{"it is damaged"}
	for _, c := range []struct {
		name  string
		file  []byte
		words []string
	}{
		{"empty", nil, []string{"it is empty"}},
		{"not an export file", []byte(strings.Repeat("a plain text file\n", 100)), damaged},
		{"cut in a snapshot's archive", whole[:part.at+int64(len(part.data))/2], cutShort},
		{"cut where the manifest begins", whole[:manifest.at-512], cutShort},
		{"cut in the manifest", whole[:manifest.at+20], cutShort},
		{"cut before the tar's end", whole[:len(whole)-1024], cutShort},
		{"cut in the tar's end", whole[:len(whole)-512], cutShort},
		{"cut in its last byte", whole[:len(whole)-1], cutShort},
		{"a byte flipped in a snapshot's archive", flip(part.at + int64(len(part.data))/2), []string{"does not match its checksum: it is damaged"}},
		{"a byte flipped in a tar header", flip(manifest.at - 512 + 100), damaged},
		{"garbage after its end", append(bytes.Clone(whole), "trailing garbage\n"...), []string{"it has more bytes after its end"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := to.Contents.Stage(ctx, "amber-fox.boxsnap", bytes.NewReader(c.file))
			if err == nil {
				st.Remove()
			}
			refused(t, err, c.words)
			if err != nil && !strings.HasPrefix(err.Error(), "amber-fox.boxsnap: ") {
				t.Errorf("the refusal %q does not name the file", err)
			}
			nothingChanged(t)
		})
	}

	// The snapshot's archive broken inside a file that is whole: Stage
	// takes it, and the import refuses it in the backend's words.
	archive := part.data
	for _, c := range []struct {
		name  string
		file  []byte
		words string
	}{
		{"a snapshot's archive cut short", withArchive(t, whole, archive[:len(archive)-1]), providers.ArchiveCutShortWords},
		{"garbage after a snapshot's archive", withArchive(t, whole, append(bytes.Clone(archive), "garbage"...)), providers.ArchiveTrailerWords},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := to.Contents.Stage(ctx, "amber-fox.boxsnap", bytes.NewReader(c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Remove()
			_, err = to.Contents.Import(ctx, snapshots.Owner(), []*contents.Staged{st})
			refused(t, err, []string{c.words})
			nothingChanged(t)
		})
	}

	if res := importInto(t, to, whole); !res.Made || len(res.Snapshots) != 1 {
		t.Fatalf("the whole file imported %+v", res)
	}
}

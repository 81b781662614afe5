package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository tracks but those in
// bigTracked: past it, a file is most likely a build's output or a data
// dump committed by mistake, which every clone then carries for good.
const maxTrackedBytes = 1 << 20

// bigTracked are the tracked files let past maxTrackedBytes, each with its
// reason. None is today (the largest, app/api/openapi.json, is about 166
// KB). An entry for a file that is no longer tracked, or no longer over the
// limit, fails the test until it is taken off.
var bigTracked = map[string]string{}

// trackedFiles are the files git tracks, from the repository's root.
func trackedFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files lists %d files; the repository tracks more", len(files))
	}
	return files
}

// executableKind names the executable format whose magic head starts,
// or "" when it is none: ELF, Mach-O (one architecture or several) or PE
// (an MZ stub whose header offset points at "PE\0\0").
func executableKind(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "an ELF executable"
	case len(head) >= 4 && machOMagic[binary.BigEndian.Uint32(head)]:
		return "a Mach-O executable"
	case bytes.HasPrefix(head, []byte("MZ")) && len(head) >= 0x40:
		off := int(binary.LittleEndian.Uint32(head[0x3c:]))
		if off >= 0x40 && off+4 <= len(head) && bytes.Equal(head[off:off+4], []byte("PE\x00\x00")) {
			return "a PE executable"
		}
	}
	return ""
}

// machOMagic are Mach-O's first four bytes read big-endian: 32 and 64 bit,
// either byte order, and the universal (fat) file of several.
var machOMagic = map[uint32]bool{0xfeedface: true, 0xfeedfacf: true, 0xcefaedfe: true, 0xcffaedfe: true, 0xcafebabe: true}

// headOf reads the first bytes of a file, enough for a PE's header offset.
func headOf(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head[:n], nil
}

// TestNoBuiltBinaryTracked: no file git tracks is an executable (a `go
// build` output committed by mistake, as a 12 MB bench/docker binary once
// was), and none is over maxTrackedBytes but those bigTracked names with
// their reason.
func TestNoBuiltBinaryTracked(t *testing.T) {
	t.Parallel()
	big := map[string]bool{}
	for _, name := range trackedFiles(t) {
		fi, err := os.Lstat(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree: what is committed next is not it
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > maxTrackedBytes {
			big[name] = true
			if _, ok := bigTracked[name]; !ok {
				t.Errorf("%s is tracked and %d bytes, over %d: take it out of git (git rm --cached), or name it in bigTracked with its reason", name, fi.Size(), maxTrackedBytes)
			}
		}
		head, err := headOf(name)
		if err != nil {
			t.Fatal(err)
		}
		if kind := executableKind(head); kind != "" {
			t.Errorf("%s is tracked and is %s, a build's output: take it out of git (git rm --cached) and ignore it in .gitignore", name, kind)
		}
	}
	for name := range bigTracked {
		if !big[name] {
			t.Errorf("bigTracked names %s, which is not a tracked file over %d bytes: take it off", name, maxTrackedBytes)
		}
	}
}

// TestBuildOutputsIgnored: the binary `go build` leaves at the root for the
// module and for each command under bench/ and tools/ (named for its
// folder: `go build ./bench/docker` leaves ./docker) is one .gitignore
// ignores, so a `git add .` after a build cannot take it in.
func TestBuildOutputsIgnored(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", "{{if eq .Name \"main\"}}{{.ImportPath}}{{end}}", ".", "./bench/...", "./tools/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var names []string
	for _, p := range strings.Fields(string(out)) {
		names = append(names, path.Base(p))
	}
	if len(names) < 10 {
		t.Fatalf("go list found %d commands at the root and under bench/ and tools/; there are more", len(names))
	}
	for _, name := range names {
		// Exit 0: ignored; 1: not ignored; anything else: git failed.
		err := exec.Command("git", "check-ignore", "-q", "--no-index", name).Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 1:
			t.Errorf("./%s, what go build leaves at the root, is not ignored: add /%s to .gitignore", name, name)
		case err != nil:
			t.Fatalf("git check-ignore %s: %v", name, err)
		}
	}
}

// TestExecutableKind: each format's head is told from text, an MZ that is
// not a PE included.
func TestExecutableKind(t *testing.T) {
	t.Parallel()
	pe := make([]byte, 0x80)
	copy(pe, "MZ")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x40)
	copy(pe[0x40:], "PE\x00\x00")
	mz := append([]byte{}, pe...)
	copy(mz[0x40:], "text")
	for _, c := range []struct {
		head []byte
		exe  bool
	}{
		{[]byte("\x7fELF\x02\x01\x01"), true},
		{[]byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, true},
		{[]byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}, true},
		{pe, true},
		{mz, false},
		{[]byte("MZ is a text file's start too"), false},
		{[]byte("package main\n"), false},
		{nil, false},
	} {
		if got := executableKind(c.head) != ""; got != c.exe {
			t.Errorf("executableKind(%q) says executable %v, want %v", c.head[:min(len(c.head), 8)], got, c.exe)
		}
	}
}

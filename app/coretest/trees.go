package coretest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TreeOf is every path under dir but the box's own .boxsnap folder, each
// with its type, mode and content's hash, or its link's target: what a
// test compares byte for byte between a snapshot's box and its fork or
// restore.
func TreeOf(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if rel == ".boxsnap" {
			return fs.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v += " -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %d %x", len(data), sha256.Sum256(data))
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// SameTree fails the test unless got is want (TreeOf's), path for path.
func SameTree(t testing.TB, what string, want, got map[string]string) {
	t.Helper()
	for p, v := range want {
		if got[p] != v {
			t.Errorf("%s: %s is %q, want %q", what, p, got[p], v)
		}
	}
	for p, v := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s holds %s (%s), which the snapshot does not", what, p, v)
		}
	}
}

// FilesUnder counts the regular files under dir; none when it is not
// there.
func FilesUnder(t testing.TB, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

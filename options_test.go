package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// optionsLiteral is a test building the API's or the web app's options by
// hand: api.Options{…}, web.Options{…}, or New(Options{…}) inside app/web.
var optionsLiteral = regexp.MustCompile(`\bapi\.Options\{|\bweb\.Options\{`)

// webOptionsLiteral is the same inside package web.
var webOptionsLiteral = regexp.MustCompile(`\bNew\(Options\{`)

// optionsHomes are the test helpers that alone spell the options out:
// coretest's Env.APIOptions and app/web's optionsOn.
var optionsHomes = []string{"app/coretest/apioptions.go", "app/web/options_test.go"}

// TestOptionsBuiltInOneHome: no test spells out the API's or the web app's
// options; each asks the one helper, so that a seam added to the options
// reaches every test at once (a test that left Restores out once made the
// API build no dry runs).
func TestOptionsBuiltInOneHome(t *testing.T) {
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") || p == "options_test.go" {
			return nil
		}
		for _, home := range optionsHomes {
			if filepath.ToSlash(p) == home {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		inWeb := filepath.ToSlash(filepath.Dir(p)) == "app/web"
		for i, line := range strings.Split(string(b), "\n") {
			if optionsLiteral.MatchString(line) || inWeb && webOptionsLiteral.MatchString(line) {
				t.Errorf("%s:%d builds the options by hand: use coretest's Env.APIOptions (or optionsOn in app/web) and set on the answer what differs", p, i+1)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

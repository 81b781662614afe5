package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// libRoot is where Debian's and Ubuntu's packages put each major version's
// binaries: /usr/lib/postgresql/<major>/bin.
const libRoot = "/usr/lib/postgresql"

// errNoBinaries is the one-line answer when no PostgreSQL is installed.
var errNoBinaries = errors.New("no PostgreSQL binaries found on PATH or under " + libRoot +
	"/*/bin: install them, e.g. apt-get install postgresql-15")

var versionPattern = regexp.MustCompile(`\(PostgreSQL\) (\d+)`)

// binaries is a folder holding initdb, pg_ctl and postgres of one major
// version.
type binaries struct {
	dir   string
	major int
}

func (b binaries) path(name string) string { return filepath.Join(b.dir, name) }

// findBinDir picks the folder of PostgreSQL's binaries. An explicit binDir
// wins. Otherwise, when the data folder already holds a cluster of major
// version want and root/<want>/bin exists, that folder (so that a machine with
// several versions keeps running a cluster with the version that made it);
// then the folder of pg_ctl on pathEnv (symbolic links resolved, since
// /usr/local/bin may hold links only); then the newest root/<major>/bin.
func findBinDir(binDir, pathEnv, root string, want int) (string, error) {
	if binDir != "" {
		if missing := missingBinaries(binDir); missing != "" {
			return "", fmt.Errorf("no PostgreSQL %s in BinDir %s: point BinDir at the folder holding initdb, pg_ctl and postgres", missing, binDir)
		}
		return binDir, nil
	}
	if want > 0 {
		dir := filepath.Join(root, strconv.Itoa(want), "bin")
		if missingBinaries(dir) == "" {
			return dir, nil
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			continue
		}
		p, err := filepath.EvalSymlinks(filepath.Join(d, "pg_ctl"))
		if err != nil {
			continue
		}
		if dir := filepath.Dir(p); missingBinaries(dir) == "" {
			return dir, nil
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", errNoBinaries
	}
	var majors []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			majors = append(majors, n)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(majors)))
	for _, n := range majors {
		dir := filepath.Join(root, strconv.Itoa(n), "bin")
		if missingBinaries(dir) == "" {
			return dir, nil
		}
	}
	return "", errNoBinaries
}

// missingBinaries names the needed programs that dir lacks, or is empty:
// initdb makes a cluster, pg_ctl starts and stops it, and pg_ctl runs postgres
// from its own folder.
func missingBinaries(dir string) string {
	var missing []string
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	return strings.Join(missing, ", ")
}

// majorVersion asks pg_ctl for its major version ("pg_ctl (PostgreSQL) 15.18").
// --version is answered before pg_ctl's refusal of root.
func majorVersion(ctx context.Context, dir string) (int, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "pg_ctl"), "--version").Output()
	if err != nil {
		return 0, fmt.Errorf("ask %s for its version: %w", filepath.Join(dir, "pg_ctl"), err)
	}
	m := versionPattern.FindSubmatch(bytes.TrimSpace(out))
	if m == nil {
		return 0, fmt.Errorf("ask %s for its version: unexpected answer %q", filepath.Join(dir, "pg_ctl"), bytes.TrimSpace(out))
	}
	return strconv.Atoi(string(m[1]))
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/boxsnap/boxsnap/"

// layers are the rules each package's doc.go states in the words "must
// never import" (or "imports nothing of boxsnap"), one row each: the
// boxsnap packages it may not import directly. A name ending in "/" stands
// for each package under it; "providers/" is any provider's own package
// (the interface package providers is open to all); "*" is every package of
// boxsnap but the ones in allow.
var layers = []struct {
	pkg    string
	forbid []string
	allow  []string
}{
	{pkg: "app/api", forbid: []string{"jobs", "app/web", "app/cli", "providers/"}},
	{pkg: "app/api/jsonin", forbid: []string{"*"}},
	{pkg: "app/api/toolparams", forbid: []string{"*"}},
	{pkg: "app/api/answers", forbid: []string{"app/api", "app/api/mcptools", "jobs", "app/web", "app/cli", "app/store", "providers/"}},
	{pkg: "app/api/mcptools", forbid: []string{"jobs", "app/web", "app/cli", "app/store", "providers/"}},
	{pkg: "app/auth", forbid: []string{"app/web", "app/api", "jobs"}},
	{pkg: "app/cli", forbid: []string{"app/api", "app/auth", "app/web", "jobs", "providers", "providers/", "app/store", "app/store/db"}},
	{pkg: "app/config", forbid: []string{"*"}},
	{pkg: "app/contentledger", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/"}},
	{pkg: "app/dbtest", forbid: []string{"*"}, allow: []string{"app/pgcluster", "app/store"}},
	{pkg: "app/operations", forbid: []string{"app/snapshots", "app/web", "app/api", "app/cli", "jobs", "providers/"}},
	{pkg: "app/pgcluster", forbid: []string{"*"}},
	{pkg: "app/pictures", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/"}},
	{pkg: "app/snapshots", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/", "app/pictures"}},
	{pkg: "app/snapshots/sweeps", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "app/coretest", "app/dbtest", "providers/"}},
	{pkg: "app/snapshots/contents", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "app/remote", "providers/"}},
	{pkg: "app/snapshots/approvals", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/"}},
	{pkg: "app/snapshots/tab", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/"}},
	{pkg: "app/snapshots/boxes", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/"}},
	{pkg: "app/snapshots/take", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/"}},
	{pkg: "app/snapshots/heads", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/"}},
	{pkg: "app/snapshots/restore", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/", "app/pictures"}},
	{pkg: "app/snapshots/keep", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/", "app/pictures"}},
	{pkg: "app/snapshots/plans", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/approvals", "app/snapshots/boxes", "app/snapshots/contents", "app/snapshots/fork", "app/snapshots/heads", "app/snapshots/keep", "app/snapshots/sweeps", "app/snapshots/tab", "app/snapshots/take", "app/pictures"}},
	{pkg: "app/snapshots/boxview", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/"}},
	{pkg: "app/snapshots/fork", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/"}},
	{pkg: "app/snapshots/hosts", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "providers/", "app/snapshots/", "app/pictures"}},
	{pkg: "app/snapshots/seams", forbid: []string{"app/web", "app/api", "app/cli", "jobs", "app/boot", "app/coretest", "app/dbtest", "providers/"}},
	{pkg: "app/store", forbid: []string{"app/web", "app/api", "jobs", "providers", "providers/"}},
	{pkg: "app/web", forbid: []string{"jobs", "providers/"}},
	{pkg: "app/web/pagemodel", forbid: []string{"net/http", "app/web", "app/api", "app/cli", "jobs", "providers/"}},
	{pkg: "app/wire", forbid: []string{"app/api", "app/cli", "app/web", "app/store", "app/store/db", "jobs", "providers/"}},
	{pkg: "jobs", forbid: []string{"app/web", "app/api"}},
	{pkg: "providers", forbid: []string{"app/", "jobs"}},
	{pkg: "providers/local", forbid: []string{"app/", "jobs", "providers/proxmox", "providers/docker"}},
	{pkg: "providers/local/diskimage", forbid: []string{"*"}},
	{pkg: "providers/local/apply", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/confined", "providers/local/content", "providers/local/diskimage", "providers/local/journal", "providers/local/store"}},
	{pkg: "providers/local/disks", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/diskimage", "providers/local/process", "providers/local/store"}},
	{pkg: "providers/local/browse", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/guestfiles", "providers/local/confined", "providers/local/store"}},
	{pkg: "providers/local/capture", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/apply", "providers/local/confined", "providers/local/journal", "providers/local/state", "providers/local/store"}},
	{pkg: "providers/local/held", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/store"}},
	{pkg: "providers/local/confined", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/store"}},
	{pkg: "providers/local/content", forbid: []string{"*"}},
	{pkg: "providers/local/exports", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/confined", "providers/local/process", "providers/local/store"}},
	{pkg: "providers/local/journal", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/confined", "providers/local/state", "providers/local/store"}},
	{pkg: "providers/local/owners", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/process", "providers/local/state", "providers/local/store"}},
	{pkg: "providers/local/process", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/confined", "providers/local/store"}},
	{pkg: "providers/local/state", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/process", "providers/local/store"}},
	{pkg: "providers/local/store", forbid: []string{"app/", "jobs", "providers/"}},
	{pkg: "providers/local/objstore", forbid: []string{"app/", "jobs", "providers/"}},
	{pkg: "providers/local/ship", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/objstore", "providers/local/store"}},
	{pkg: "providers/local/objstore/s3test", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/objstore"}},
	{pkg: "providers/local/sweep", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/content", "providers/local/overlay", "providers/local/state", "providers/local/store"}},
	{pkg: "providers/local/overlay", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/local/confined", "providers/local/diskimage", "providers/local/store"}},
	{pkg: "providers/proxmox", forbid: []string{"app/", "jobs", "providers/local", "providers/docker"}},
	{pkg: "providers/docker", forbid: []string{"app/", "jobs", "providers/local", "providers/proxmox"}},
	{pkg: "providers/docker/moves", forbid: []string{"app/", "jobs", "providers/"}},
	{pkg: "providers/docker/boxfiles", forbid: []string{"app/", "jobs", "providers/"}, allow: []string{"providers/guestfiles"}},
	{pkg: "providers/guestfiles", forbid: []string{"app/", "jobs", "providers/"}},
	{pkg: "providers/docker/changerecord", forbid: []string{"*"}},
	{pkg: "providers/docker/hoststate", forbid: []string{"*"}},
	{pkg: "providers/qemu", forbid: []string{"app/", "jobs", "providers/local", "providers/proxmox", "providers/docker", "providers/pvesim"}},
	{pkg: "providers/providertest", forbid: []string{"app/", "jobs", "providers/"}},
	{pkg: "providers/pvesim", forbid: []string{"app/", "jobs", "providers", "providers/proxmox"}},
	{pkg: "bench/benchbucket", forbid: []string{"app/web", "app/api", "app/cli", "jobs"}},
	{pkg: "internal/shape", forbid: []string{"*"}},
	{pkg: "internal/wordshape", forbid: []string{"*"}},
	{pkg: "views", forbid: []string{"*"}},
	{pkg: "static", forbid: []string{"*"}},
}

// importedByNoApp are packages whose doc.go says nothing of the app may
// import them.
var importedByNoApp = []string{"app/boot", "e2e"}

// TestImportsBearOutTheDocs: what each package's doc.go says it must never
// import, it does not import, so a doc.go is a promise the build keeps, and
// app/dbtest, for tests only, is imported by no package but the tests'
// helpers.
func TestImportsBearOutTheDocs(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	// std are each package's imports from the standard library, for a row
	// that names one (app/web/pagemodel never imports net/http).
	std := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		var own, lib []string
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			} else {
				lib = append(lib, imp)
			}
		}
		imports[strings.TrimPrefix(f[0], module)] = own
		std[strings.TrimPrefix(f[0], module)] = lib
	}
	for _, l := range layers {
		own, ok := imports[l.pkg]
		if !ok {
			t.Errorf("%s: no such package", l.pkg)
			continue
		}
		doc, err := os.ReadFile(filepath.Join(filepath.FromSlash(l.pkg), "doc.go"))
		if err != nil {
			t.Errorf("%s: %v", l.pkg, err)
		} else if s := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " "); !strings.Contains(s, "never import") && !strings.Contains(s, "imports nothing of boxsnap") {
			t.Errorf("%s/doc.go does not say what the package must never import", l.pkg)
		}
		for _, imp := range own {
			if forbidden(imp, l.forbid, l.allow) {
				t.Errorf("%s imports %s, which its doc.go forbids", l.pkg, imp)
			}
		}
		for _, imp := range std[l.pkg] {
			if slices.Contains(l.forbid, imp) {
				t.Errorf("%s imports %s, which its doc.go forbids", l.pkg, imp)
			}
		}
	}
	for pkg, own := range imports {
		for _, imp := range own {
			if imp == "app/dbtest" && pkg != "app/coretest" {
				t.Errorf("%s imports app/dbtest, which is for tests only", pkg)
			}
			if strings.HasPrefix(pkg, "app/") && slices.Contains(importedByNoApp, imp) {
				t.Errorf("%s imports %s, which no package of the app may", pkg, imp)
			}
		}
	}
	// Every doc.go that says what its package must never import has its row
	// above, so no such promise goes unchecked.
	rows := map[string]bool{}
	for _, l := range layers {
		rows[l.pkg] = true
	}
	for pkg := range imports {
		doc, err := os.ReadFile(filepath.Join(filepath.FromSlash(pkg), "doc.go"))
		if err != nil {
			continue
		}
		s := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " ")
		if (strings.Contains(s, "never import") || strings.Contains(s, "imports nothing of boxsnap")) && !rows[pkg] {
			t.Errorf("%s/doc.go says what it must never import, and layers has no row for it", pkg)
		}
	}
	// Every seam moved out of the kernel (a package under app/snapshots/)
	// has its row, so a new seam cannot leave its doc.go's rule unstated.
	for pkg := range imports {
		if strings.HasPrefix(pkg, "app/snapshots/") && !rows[pkg] {
			t.Errorf("%s is a seam of the core, and layers has no row for it: its doc.go says what it must never import, and a row here holds it to that", pkg)
		}
	}
}

// forbidden says whether imp is one of forbid's packages and none of
// allow's.
func forbidden(imp string, forbid, allow []string) bool {
	for _, a := range allow {
		if imp == a {
			return false
		}
	}
	for _, f := range forbid {
		switch {
		case f == "*":
			return true
		case strings.HasSuffix(f, "/") && strings.HasPrefix(imp, f):
			return true
		case imp == f:
			return true
		}
	}
	return false
}

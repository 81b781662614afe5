package main

import (
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function of the packages funcRoots
// names may take, from its func keyword to its closing brace.
const maxFuncLines = 100

// oneThing is the functions over maxFuncLines that are truly one thing,
// each with its reason; keyed "file Recv.Name" (file from the module's root).
var oneThing = map[string]string{
	"app/web/routes.go Server.router": "the web's route table: every route one line, read in one place",
}

// funcRoots are the folders TestFunctionsDoOneThing holds to maxFuncLines:
// the core, the backends, the surfaces, the process's start and stop, its
// database, the test stacks (app/coretest, e2e), the jobs, the tools and
// the benchmarks, and the settings.
var funcRoots = []string{"app/snapshots/", "app/operations/", "providers/", "app/web/", "app/api/", "app/cli/", "app/boot/", "app/config/", "app/contentledger/",
	"app/pgcluster/", "app/coretest/", "app/dbtest/", "app/auth/", "app/pictures/", "app/store/", "app/wire/", "app/demo/",
	"app/remote/", "app/doctor/", "app/logging/", "app/ids/", "jobs/", "internal/", "tools/", "e2e/",
	"bench/benchtree/", "bench/compare/", "bench/confined/", "bench/export/", "bench/journal/", "bench/local/", "bench/signin/", "bench/startup/",
	"bench/docker/", "bench/forkmany/", "bench/bucket/", "bench/qemu/", "bench/dockerexport/"}

// TestFunctionsDoOneThing: in the folders funcRoots names, no function of
// non-test, non-generated code is over maxFuncLines lines, but the few in
// oneThing, which are one step each.
func TestFunctionsDoOneThing(t *testing.T) {
	t.Parallel()
	h, err := measured()
	if err != nil {
		t.Fatal(err)
	}
	lengths := map[string]int{}
	for _, f := range h.Funcs {
		for _, root := range funcRoots {
			if strings.HasPrefix(f.File, root) {
				lengths[f.File+" "+f.Name] = f.Lines
			}
		}
	}
	var names []string
	for name := range lengths {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := lengths[name]
		if _, ok := oneThing[name]; ok {
			continue
		}
		if n > maxFuncLines {
			t.Errorf("%s is %d lines, over %d: split it along the steps its comments name", name, n, maxFuncLines)
		}
	}
	for name := range oneThing {
		if _, ok := lengths[name]; !ok {
			t.Errorf("oneThing names %s, which is no longer there", name)
		}
	}
}

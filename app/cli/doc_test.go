package cli

import (
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// docCommands reads the commands doc.go lists: the words of each indented
// block of its comment, in order (`boxsnap snapshot`'s, then `boxsnap
// box`'s).
func docCommands(t *testing.T) [][]string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var blocks [][]string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		text, indented := strings.CutPrefix(line, "//\t")
		if !indented {
			in = false
			continue
		}
		if !in {
			blocks = append(blocks, nil)
			in = true
		}
		blocks[len(blocks)-1] = append(blocks[len(blocks)-1], strings.Fields(text)...)
	}
	return blocks
}

func names(cmds map[string]command) []string {
	var n []string
	for k := range cmds {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// TestDocListsEveryCommand: the package's doc lists every command the CLI
// has, and only those: `boxsnap snapshot`'s, then `boxsnap box`'s.
func TestDocListsEveryCommand(t *testing.T) {
	blocks := docCommands(t)
	if len(blocks) != 2 {
		t.Fatalf("doc.go has %d lists of commands, want 2 (boxsnap snapshot's, then boxsnap box's)", len(blocks))
	}
	for i, g := range []struct {
		group string
		cmds  map[string]command
	}{{"boxsnap snapshot", commands()}, {"boxsnap box", boxCommands()}} {
		listed := slices.Clone(blocks[i])
		sort.Strings(listed)
		for _, n := range listed {
			if _, ok := g.cmds[n]; !ok {
				t.Errorf("doc.go lists %s %s, which is no command of the CLI", g.group, n)
			}
		}
		for _, n := range names(g.cmds) {
			if !slices.Contains(listed, n) {
				t.Errorf("doc.go does not list %s %s", g.group, n)
			}
		}
		if c := slices.Compact(slices.Clone(listed)); len(c) != len(listed) {
			t.Errorf("doc.go lists a command of %s twice", g.group)
		}
	}
}

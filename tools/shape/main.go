// Command shape prints the shape of boxsnap's Go code, hand-written files
// only (no _test.go file, no generated file such as sqlc's app/store/db):
// for every package, its lines, the file-to-file arrows inside it and how
// many run back up, and each type with more than 20 methods; then the
// circles between packages and the ten longest functions. With -pkg, it
// also prints one package's files by floor and the arrows that run back
// up, with the names each uses.
//
// An arrow is file A using a name declared in file B of the same package.
// Each file stands on a floor of its own, above the files it uses; files
// that use each other through a cycle are stacked in the order that leaves
// the fewest arrows pointing up (package internal/shape says how). An
// arrow runs back up when it goes to a file on a higher floor.
// TestTheCoreKeepsItsShape holds the same figures to their limits.
//
//	go run ./tools/shape
//	go run ./tools/shape -pkg app/snapshots
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/boxsnap/boxsnap/internal/shape"
)

func main() {
	pkg := flag.String("pkg", "", "also print this package's files by floor and its arrows that run back up (a folder from the module's root, e.g. app/snapshots)")
	longest := flag.Int("funcs", 10, "how many of the longest functions to print")
	flag.Parse()
	h, err := shape.Measure(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "shape:", err)
		os.Exit(1)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "package\tlines\tarrows\tback up\tshare\t  types over 20 methods\t")
	for _, p := range h.Packages {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%.1f%%\t  %s\t\n", p.Path, p.Lines, len(p.Arrows), p.BackUp(), p.BackUpShare(), bigTypes(p))
	}
	w.Flush()
	fmt.Printf("\ncircles between packages: %d (go build refuses an import cycle, so a module that builds has none)\n", len(h.Circles))
	for _, c := range h.Circles {
		fmt.Println("  ", strings.Join(c, " -> "))
	}
	fmt.Printf("\nthe %d longest functions (lines, from func to its closing brace):\n", *longest)
	for i, f := range h.Funcs {
		if i == *longest {
			break
		}
		fmt.Printf("%6d  %s:%d %s\n", f.Lines, f.File, f.Line, f.Name)
	}
	if *pkg != "" {
		p := h.Package(strings.TrimSuffix(*pkg, "/"))
		if p == nil {
			fmt.Fprintf(os.Stderr, "shape: no package with hand-written Go files at %s\n", *pkg)
			os.Exit(1)
		}
		printFloors(p)
	}
}

// bigTypes names the package's types with more than 20 methods, most
// first, each with its count.
func bigTypes(p *shape.Package) string {
	var names []string
	for name, n := range p.Methods {
		if n > 20 {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if p.Methods[names[i]] != p.Methods[names[j]] {
			return p.Methods[names[i]] > p.Methods[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s %d", name, p.Methods[name]))
	}
	return strings.Join(parts, ", ")
}

// printFloors prints p's files from the top floor down, then each arrow
// that runs back up with the names it uses.
func printFloors(p *shape.Package) {
	fmt.Printf("\n%s: %d files, %d arrows, %d run back up\n", p.Path, len(p.Files), len(p.Arrows), p.BackUp())
	byFloor := map[int][]string{}
	top := 0
	for _, f := range p.Files {
		fl := p.Floors[f]
		byFloor[fl] = append(byFloor[fl], f)
		top = max(top, fl)
	}
	for fl := top; fl >= 1; fl-- {
		if len(byFloor[fl]) > 0 {
			fmt.Printf("floor %3d  %s\n", fl, strings.Join(byFloor[fl], " "))
		}
	}
	fmt.Println("\narrows that run back up (file -> file: the names it uses there):")
	for _, a := range p.Arrows {
		if a.BackUp {
			fmt.Printf("  %s -> %s: %s\n", a.From, a.To, strings.Join(a.Names, ", "))
		}
	}
}

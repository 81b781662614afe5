package shape

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Package is one Go package's shape, its hand-written files only.
type Package struct {
	// Path is the package's folder relative to the module's root, with
	// slashes ("app/snapshots"; "." for the root).
	Path string
	// Files are its hand-written files' names, sorted.
	Files []string
	// Lines are the lines of its hand-written files, blank and comment
	// lines too.
	Lines int
	// Methods is, for each type of the package, the methods declared on it
	// (on a pointer or a value receiver); promoted methods are not its own.
	Methods map[string]int
	// Floors is each file's floor, from 1.
	Floors map[string]int
	// Arrows are the arrows between its files, by the file that uses.
	Arrows []Arrow
}

// Arrow is file From using names declared in file To of the same package.
type Arrow struct {
	From, To string
	// Names are the names From uses of To, sorted.
	Names []string
	// BackUp says whether To stands on a higher floor than From,
	// which puts the arrow inside a cycle of files.
	BackUp bool
}

// BackUp counts the package's arrows that run back up.
func (p *Package) BackUp() int {
	n := 0
	for _, a := range p.Arrows {
		if a.BackUp {
			n++
		}
	}
	return n
}

// BackUpShare is the share of the package's arrows that run back up, in
// per cent, 0 when it has no arrow.
func (p *Package) BackUpShare() float64 {
	if len(p.Arrows) == 0 {
		return 0
	}
	return 100 * float64(p.BackUp()) / float64(len(p.Arrows))
}

// Func is one function or method and its length.
type Func struct {
	// File is its file relative to the module's root, Line its func
	// keyword's line.
	File string
	Line int
	// Name is the function's name, a method's as Type.Name.
	Name string
	// Lines run from its func keyword to its closing brace.
	Lines int
}

// House is the shape of the whole module.
type House struct {
	// Packages are those with a hand-written Go file, by path.
	Packages []*Package
	// Funcs are every function and method with a body, longest first.
	Funcs []Func
	// Circles are the sets of packages of the module that import each
	// other in a loop. go build refuses an import cycle, so a module that
	// builds has none; they are counted so the figure is measured, not
	// assumed.
	Circles [][]string
}

// Package answers the package at path, or nil.
func (h *House) Package(path string) *Package {
	for _, p := range h.Packages {
		if p.Path == path {
			return p
		}
	}
	return nil
}

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	DepOnly    bool
	Imports    []string
	Error      *struct{ Err string }
}

// Measure reads the module whose root is dir: every package `go list
// ./...` names there, type-checked against the export data of what it
// imports.
func Measure(dir string) (*House, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("shape: %w", err)
	}
	cmd := exec.Command("go", "list", "-e", "-export", "-deps",
		"-json=ImportPath,Dir,GoFiles,Export,DepOnly,Imports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("shape: go list: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	exports := map[string]string{}
	var own []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("shape: go list's answer: %w", err)
		}
		exports[l.ImportPath] = l.Export
		if !l.DepOnly {
			if l.Error != nil {
				return nil, fmt.Errorf("shape: %s: %s", l.ImportPath, l.Error.Err)
			}
			own = append(own, l)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	h := &House{}
	for _, l := range own {
		rel, err := filepath.Rel(root, l.Dir)
		if err != nil {
			return nil, fmt.Errorf("shape: %w", err)
		}
		rel = filepath.ToSlash(rel)
		if slices.Contains(strings.Split(rel, "/"), "vendor") || len(l.GoFiles) == 0 {
			continue
		}
		p, funcs, err := measurePackage(fset, imp, l, rel)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		h.Packages = append(h.Packages, p)
		h.Funcs = append(h.Funcs, funcs...)
	}
	sort.Slice(h.Packages, func(i, j int) bool { return h.Packages[i].Path < h.Packages[j].Path })
	sort.SliceStable(h.Funcs, func(i, j int) bool {
		a, b := h.Funcs[i], h.Funcs[j]
		if a.Lines != b.Lines {
			return a.Lines > b.Lines
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	h.Circles = packageCircles(own)
	return h, nil
}

// measurePackage type-checks one package (every file of it, generated ones
// too, so names resolve) and measures its hand-written files; nil when it
// has none.
func measurePackage(fset *token.FileSet, imp types.Importer, l listed, rel string) (*Package, []Func, error) {
	var files []*ast.File
	hand := map[string]*ast.File{}
	for _, name := range l.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(l.Dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, nil, fmt.Errorf("shape: %w", err)
		}
		files = append(files, f)
		if !ast.IsGenerated(f) {
			hand[name] = f
		}
	}
	if len(hand) == 0 {
		return nil, nil, nil
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp}
	pkg, err := conf.Check(l.ImportPath, fset, files, info)
	if err != nil {
		return nil, nil, fmt.Errorf("shape: type-check %s: %w", l.ImportPath, err)
	}
	p := &Package{Path: rel, Methods: map[string]int{}}
	var funcs []Func
	for name, f := range hand {
		p.Files = append(p.Files, name)
		tf := fset.File(f.Pos())
		p.Lines += tf.LineCount()
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			fname := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) > 0 {
				recv := recvName(fn.Recv.List[0].Type)
				p.Methods[recv]++
				fname = recv + "." + fname
			}
			if fn.Body == nil {
				continue
			}
			start := fset.Position(fn.Pos()).Line
			funcs = append(funcs, Func{
				File:  joinPath(rel, name),
				Line:  start,
				Name:  fname,
				Lines: fset.Position(fn.End()).Line - start + 1,
			})
		}
	}
	sort.Strings(p.Files)
	// names[from][to] are the names file from uses of file to.
	names := map[string]map[string]map[string]bool{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		if from == to || hand[from] == nil || hand[to] == nil {
			continue
		}
		if names[from] == nil {
			names[from] = map[string]map[string]bool{}
		}
		if names[from][to] == nil {
			names[from][to] = map[string]bool{}
		}
		names[from][to][obj.Name()] = true
	}
	p.Floors, p.Arrows = floors(p.Files, names)
	return p, funcs, nil
}

// floors puts each file on a floor of its own and marks the arrows that
// run back up. The strongly connected components of the arrows stand one
// on another, each above every component it uses; inside a component of
// several files (files that use each other through a cycle), the files are
// stacked in the order cycleOrder finds, which leaves as few arrows as it
// can pointing upward. An arrow runs back up when it goes to a file on a
// higher floor.
func floors(files []string, names map[string]map[string]map[string]bool) (map[string]int, []Arrow) {
	edges := map[string][]string{}
	for _, from := range files {
		for to := range names[from] {
			edges[from] = append(edges[from], to)
		}
		sort.Strings(edges[from])
	}
	comps := components(files, edges)
	comp := map[string]int{}
	for i, c := range comps {
		for _, f := range c {
			comp[f] = i
		}
	}
	// Tarjan's algorithm closes a component only after every component it
	// reaches, so the components come lowest first: each starts one floor
	// above the highest floor of any component it uses.
	top := make([]int, len(comps)) // the highest floor of each component
	fl := map[string]int{}
	for i, c := range comps {
		base := 1
		for _, f := range c {
			for _, to := range edges[f] {
				if j := comp[to]; j != i && top[j]+1 > base {
					base = top[j] + 1
				}
			}
		}
		for k, f := range cycleOrder(c, edges) {
			fl[f] = base + k
		}
		top[i] = base + len(c) - 1
	}
	var arrows []Arrow
	for _, from := range files {
		for _, to := range edges[from] {
			var ns []string
			for n := range names[from][to] {
				ns = append(ns, n)
			}
			sort.Strings(ns)
			arrows = append(arrows, Arrow{From: from, To: to, Names: ns, BackUp: fl[to] > fl[from]})
		}
	}
	return fl, arrows
}

// cycleOrder stacks the files of one component, lowest first, by the
// greedy order of Eades, Lin and Smyth for few upward arrows: a file that
// uses none of the files left goes to the bottom, one that none of them
// uses to the top, and otherwise the file that uses the most and is used
// the least (ties by name) goes to the top; then the same with the rest.
func cycleOrder(c []string, edges map[string][]string) []string {
	left := map[string]bool{}
	for _, f := range c {
		left[f] = true
	}
	uses := func(f string) (out, in int) {
		for _, to := range edges[f] {
			if to != f && left[to] {
				out++
			}
		}
		for _, g := range c {
			if g == f || !left[g] {
				continue
			}
			for _, to := range edges[g] {
				if to == f {
					in++
				}
			}
		}
		return out, in
	}
	var bottom, upper []string // upper: the first is the highest
	for len(left) > 0 {
		moved := false
		for _, f := range c {
			if !left[f] {
				continue
			}
			out, in := uses(f)
			switch {
			case out == 0:
				bottom = append(bottom, f)
			case in == 0:
				upper = append(upper, f)
			default:
				continue
			}
			delete(left, f)
			moved = true
		}
		if moved {
			continue
		}
		best, bestScore := "", 0
		for _, f := range c {
			if !left[f] {
				continue
			}
			out, in := uses(f)
			if best == "" || out-in > bestScore {
				best, bestScore = f, out-in
			}
		}
		upper = append(upper, best)
		delete(left, best)
	}
	slices.Reverse(upper)
	return append(bottom, upper...)
}

// components are the strongly connected components of the graph (Tarjan),
// each closed only after every component it reaches.
func components(nodes []string, edges map[string][]string) [][]string {
	index := map[string]int{}
	low := map[string]int{}
	on := map[string]bool{}
	var stack []string
	var comps [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v] = len(index)
		low[v] = index[v]
		stack = append(stack, v)
		on[v] = true
		for _, w := range edges[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			sort.Strings(c)
			comps = append(comps, c)
		}
	}
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return comps
}

// packageCircles are the components of more than one package in the
// import graph of the module's own packages.
func packageCircles(own []listed) [][]string {
	mine := map[string]bool{}
	var nodes []string
	for _, l := range own {
		mine[l.ImportPath] = true
		nodes = append(nodes, l.ImportPath)
	}
	edges := map[string][]string{}
	for _, l := range own {
		for _, imp := range l.Imports {
			if mine[imp] {
				edges[l.ImportPath] = append(edges[l.ImportPath], imp)
			}
		}
	}
	var circles [][]string
	for _, c := range components(nodes, edges) {
		if len(c) > 1 {
			circles = append(circles, c)
		}
	}
	return circles
}

// recvName is the type a method's receiver names, without pointer or type
// parameters.
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.ParenExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// joinPath is a file's path from the module's root.
func joinPath(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

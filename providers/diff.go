package providers

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// diffContext is how many unchanged lines a hunk shows around a change, as
// diff -u does.
const diffContext = 3

// maxDiffEdits bounds the edit distance the line diff searches; past it the
// differing middle is shown as all removed and all added. Its memory grows
// with the square of this.
const maxDiffEdits = 2000

// splitLines splits text into lines, each keeping its "\n".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// edit is one line of an edit script: ' ' kept, '-' removed, '+' added.
type edit struct {
	op   byte
	line string
}

// lineEdits gives a shortest edit script from a to b (Myers' algorithm), after
// taking off the common start and end.
func lineEdits(a, b []string) []edit {
	var out []edit
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		out = append(out, edit{' ', a[pre]})
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for i := len(a) - suf; i < len(a); i++ {
		out = append(out, edit{' ', a[i]})
	}
	return out
}

func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(a, b)
	}
	maxD := n + m
	if maxD > maxDiffEdits {
		maxD = maxDiffEdits
	}
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] holds v[-d-1 .. d+1] as it was before round d.
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace)
			}
		}
	}
	return replaceAll(a, b)
}

func backtrack(a, b []string, trace [][]int) []edit {
	x, y := len(a), len(b)
	var rev []edit
	for d := len(trace) - 1; d >= 0; d-- {
		tv := trace[d]
		at := func(k int) int { return tv[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, edit{' ', a[x-1]})
			x--
			y--
		}
		if d > 0 {
			if x == px {
				rev = append(rev, edit{'+', b[y-1]})
			} else {
				rev = append(rev, edit{'-', a[x-1]})
			}
		}
		x, y = px, py
	}
	out := make([]edit, len(rev))
	for i := range rev {
		out[i] = rev[len(rev)-1-i]
	}
	return out
}

func replaceAll(a, b []string) []edit {
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, edit{'-', l})
	}
	for _, l := range b {
		out = append(out, edit{'+', l})
	}
	return out
}

// UnifiedDiff gives the unified diff of two texts, or "" when they are the
// same: what every Browser's DiffFile answers.
func UnifiedDiff(oldName, newName, a, b string) string {
	if a == b {
		return ""
	}
	edits := lineEdits(splitLines(a), splitLines(b))
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	i := 0
	for i < len(edits) {
		// Find the next change.
		for i < len(edits) && edits[i].op == ' ' {
			i++
		}
		if i >= len(edits) {
			break
		}
		start := i - diffContext
		if start < 0 {
			start = 0
		}
		// Extend the hunk while changes are within two contexts of each other.
		end := i
		for {
			for end < len(edits) && edits[end].op != ' ' {
				end++
			}
			next := end
			for next < len(edits) && edits[next].op == ' ' {
				next++
			}
			if next < len(edits) && next-end <= 2*diffContext {
				end = next
				continue
			}
			end += diffContext
			if end > len(edits) {
				end = len(edits)
			}
			break
		}
		// Line numbers where the hunk starts on each side.
		aLine, bLine := 0, 0
		for _, e := range edits[:start] {
			if e.op != '+' {
				aLine++
			}
			if e.op != '-' {
				bLine++
			}
		}
		aCount, bCount := 0, 0
		for _, e := range edits[start:end] {
			if e.op != '+' {
				aCount++
			}
			if e.op != '-' {
				bCount++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aLine, aCount), hunkRange(bLine, bCount))
		for _, e := range edits[start:end] {
			sb.WriteByte(e.op)
			sb.WriteString(e.line)
			if !strings.HasSuffix(e.line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return sb.String()
}

func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// textSniff is how much of a file is looked at to say it is text.
const textSniff = 8000

// IsText says whether data reads as text: no NUL byte in its first
// textSniff bytes, and valid UTF-8.
func IsText(data []byte) bool {
	sniff := data
	if len(sniff) > textSniff {
		sniff = sniff[:textSniff]
	}
	return bytes.IndexByte(sniff, 0) < 0 && utf8.Valid(data)
}

// CompareSides is the comparison of the file rel as a snapshot held it
// (old, named oldName) and as the other side holds it (cur, newName), as
// every backend's Browser answers it: a side's name is "/dev/null" where
// that side has no such file, "a/rel" and "b/rel" when empty; a file on
// neither side is ErrNotFound, and one that is not text on either side is
// refused in words.
func CompareSides(rel, oldName string, old []byte, newName string, cur []byte) (string, error) {
	if oldName == "/dev/null" && newName == "/dev/null" {
		return "", fmt.Errorf("compare %s: on neither side: %w", rel, ErrNotFound)
	}
	if oldName == "" {
		oldName = "a/" + rel
	}
	if newName == "" {
		newName = "b/" + rel
	}
	for _, data := range [][]byte{old, cur} {
		if !IsText(data) {
			return "", &RefusedError{Why: fmt.Sprintf("%s is not text, so it cannot be compared: download it instead", rel)}
		}
	}
	return UnifiedDiff(oldName, newName, string(old), string(cur)), nil
}

// Listed is what a comparison of two listings reads of an entry: its path
// (the order both listings are sorted in), its type, and its size.
type Listed struct {
	Path, Type string
	Size       int64
}

// CompareListings walks two listings sorted by path side by side and
// answers what was removed, added and changed, as every backend's
// Browser answers a comparison of two snapshots: a folder is listed when
// it was added or removed, never for what it holds; same says whether an
// entry on both sides is unchanged; a size is given for files only.
func CompareListings[T any](old, cur []T, of func(*T) Listed, same func(o, n *T) bool) []FileChange {
	var out []FileChange
	size := func(l Listed) *int64 {
		if l.Type != "file" {
			return nil
		}
		v := l.Size
		return &v
	}
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		var o, n Listed
		if i < len(old) {
			o = of(&old[i])
		}
		if j < len(cur) {
			n = of(&cur[j])
		}
		switch {
		case j >= len(cur) || (i < len(old) && o.Path < n.Path):
			out = append(out, FileChange{Path: o.Path, Change: ChangeRemoved, Type: o.Type, Before: size(o)})
			i++
		case i >= len(old) || n.Path < o.Path:
			out = append(out, FileChange{Path: n.Path, Change: ChangeAdded, Type: n.Type, After: size(n)})
			j++
		default:
			if !same(&old[i], &cur[j]) {
				out = append(out, FileChange{Path: n.Path, Change: ChangeChanged, Type: n.Type, Before: size(o), After: size(n)})
			}
			i++
			j++
		}
	}
	return out
}

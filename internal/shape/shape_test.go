package shape

import (
	"fmt"
	"testing"
)

// TestFloorsAndArrowsBackUp: a file stands above every file it uses
// outside its cycle; files that use each other stand one on another, and
// only the one arrow of their cycle that must point up runs back up.
func TestFloorsAndArrowsBackUp(t *testing.T) {
	t.Parallel()
	uses := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	// top.go uses a.go; a.go and b.go use each other; b.go uses words.go;
	// apart.go uses nothing and nothing uses it.
	names := map[string]map[string]map[string]bool{
		"top.go": {"a.go": uses("A")},
		"a.go":   {"b.go": uses("B", "C")},
		"b.go":   {"a.go": uses("A"), "words.go": uses("w")},
	}
	fl, arrows := floors([]string{"a.go", "apart.go", "b.go", "top.go", "words.go"}, names)
	wantFloors := map[string]int{"words.go": 1, "apart.go": 1, "b.go": 2, "a.go": 3, "top.go": 4}
	if fmt.Sprint(fl) != fmt.Sprint(wantFloors) {
		t.Errorf("floors %v, want %v", fl, wantFloors)
	}
	want := "[{a.go b.go [B C] false} {b.go a.go [A] true} {b.go words.go [w] false} {top.go a.go [A] false}]"
	if got := fmt.Sprint(arrows); got != want {
		t.Errorf("arrows %s, want %s", got, want)
	}
	p := &Package{Arrows: arrows}
	if p.BackUp() != 1 || p.BackUpShare() != 25 {
		t.Errorf("%d arrows back up, %.1f%%; want 1, 25%%", p.BackUp(), p.BackUpShare())
	}
}

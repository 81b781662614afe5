package providers

import (
	"reflect"
	"testing"
)

// TestCompareListings: two listings sorted by path read as removed, added
// and changed entries, a folder only when it came or went, a size for
// files only.
func TestCompareListings(t *testing.T) {
	type e struct {
		path, typ string
		size      int64
		sum       string
	}
	old := []e{{"a", "file", 1, "x"}, {"b", "folder", 0, ""}, {"c", "file", 3, "y"}, {"d", "file", 4, "z"}}
	cur := []e{{"b", "folder", 0, ""}, {"c", "file", 5, "w"}, {"d", "file", 4, "z"}, {"e", "link", 0, "t"}}
	got := CompareListings(old, cur, func(x *e) Listed { return Listed{Path: x.path, Type: x.typ, Size: x.size} },
		func(o, n *e) bool { return *o == *n })
	one, three, five := int64(1), int64(3), int64(5)
	want := []FileChange{
		{Path: "a", Change: ChangeRemoved, Type: "file", Before: &one},
		{Path: "c", Change: ChangeChanged, Type: "file", Before: &three, After: &five},
		{Path: "e", Change: ChangeAdded, Type: "link"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the comparison is %+v, want %+v", got, want)
	}
}

package contentledger

import (
	"slices"
	"testing"
)

// TestDeltaNamesAndDrops: over a base, a snapshot names the keys the base
// lacks and drops the base's keys it lacks, whatever order or repeats the
// lists come in.
func TestDeltaNamesAndDrops(t *testing.T) {
	keys := sortedSet([]string{"c", "a", "e", "c", "f"})
	base := sortedSet([]string{"b", "c", "d", "e", "b"})
	if !slices.Equal(keys, []string{"a", "c", "e", "f"}) || !slices.Equal(base, []string{"b", "c", "d", "e"}) {
		t.Fatalf("sorted sets %v and %v", keys, base)
	}
	names, drops := delta(keys, base)
	if !slices.Equal(names, []string{"a", "f"}) || !slices.Equal(drops, []string{"b", "d"}) {
		t.Fatalf("over %v, %v names %v and drops %v; want [a f] and [b d]", base, keys, names, drops)
	}
	if names, drops := delta(keys, nil); !slices.Equal(names, keys) || drops != nil {
		t.Fatalf("over nothing, %v names %v and drops %v", keys, names, drops)
	}
	if got := sortedSet([]string{"a", "a"}); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("a repeated key is named %v", got)
	}
}

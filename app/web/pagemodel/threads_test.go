package pagemodel

import (
	"slices"
	"testing"
)

// TestThreadTitlesReadOnce: a page's titles are read in one read for the
// rows it names first, and a title beyond them once, even when it cannot be
// read.
func TestThreadTitlesReadOnce(t *testing.T) {
	t.Parallel()
	var reads [][]string
	tt := &threadTitles{known: map[string]string{}, read: func(ids []string) (map[string]string, error) {
		reads = append(reads, slices.Clone(ids))
		out := map[string]string{}
		for _, id := range ids {
			if id != "gone" {
				out[id] = "title of " + id
			}
		}
		return out, nil
	}}
	tt.know([]string{"a", "b", "a"})
	if got := tt.title("a") + "|" + tt.title("b"); got != "title of a|title of b" {
		t.Errorf("titles %q", got)
	}
	if tt.title("gone") != "" || tt.title("gone") != "" {
		t.Error("a thread that is gone has a title")
	}
	if len(reads) != 2 || !slices.Equal(reads[0], []string{"a", "b"}) || !slices.Equal(reads[1], []string{"gone"}) {
		t.Errorf("reads %v, want [[a b] [gone]]", reads)
	}
}

package web

import (
	"context"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestSizesAddUp: one rounding rule for sizes: below 1 KB a size is said
// in bytes, so five 47-byte snapshots read "47 bytes" each and the tab's
// total is their sum; the same snapshot says the same size on every page,
// and Browse says which size is which.
func TestSizesAddUp(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	dir := s.env.Local.BoxDir(providers.Guest{Ref: b.GuestRef})
	var ids []string
	for i := range 5 {
		text := fmt.Sprintf("line %d of the notes, forty-seven bytes long, %s", i, strings.Repeat(".", 47))[:47]
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("notes-%d.txt", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		op, sn, err := s.env.Core.Take(ctx, snapshots.Owner(), snapshots.TakeRequest{Box: b.Name, Name: fmt.Sprintf("step %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		s.env.Wait(t, op)
		ids = append(ids, sn.ID)
	}
	bytesOf := regexp.MustCompile(` · (\d+) bytes`)
	for _, page := range []string{"/boxes/snapshots", "/boxes/amber-fox"} {
		body := html.UnescapeString(s.do(t, "GET", page, nil, nil).Body.String())
		sum := 0
		for i, id := range ids {
			row := body[strings.Index(body, `id="snap-`+id+`"`):]
			row = row[:strings.Index(row, "</li>")]
			m := bytesOf.FindStringSubmatch(row)
			if m == nil || strings.Contains(row, "1 KB") || i > 0 && m[1] != "47" {
				t.Fatalf("%s: the row of a snapshot that added a 47-byte file does not say its size in bytes:\n%s", page, row)
			}
			n, _ := strconv.Atoi(m[1])
			sum += n
		}
		if want := fmt.Sprintf("5 snapshots · %d bytes on this host", sum); page == "/boxes/snapshots" && !strings.Contains(body, want) {
			t.Errorf("the tab's line does not say the sum of its rows, %q:\n%s", want, body[strings.Index(body, `class="tabline"`):][:200])
		}
	}
	files := html.UnescapeString(s.do(t, "GET", "/boxes/amber-fox/snapshots/"+ids[4]+"/files", nil, nil).Body.String())
	if !strings.Contains(files, "‘step 4’ itself takes 47 bytes: what it added to the store") {
		t.Errorf("Browse does not say which size is which:\n%s", files)
	}
	fork := html.UnescapeString(s.do(t, "GET", "/boxes/amber-fox/snapshots/"+ids[4]+"/fork", nil, nil).Body.String())
	m := regexp.MustCompile(`as the snapshot, (\d+ bytes) of files.*?, and (\d+ bytes) on this host`).FindStringSubmatch(strings.ReplaceAll(fork, "\n", " "))
	if m == nil || m[1] != m[2] || strings.Contains(fork, "1 KB") {
		t.Errorf("the fork dialog's sizes disagree (%q):\n%s", m, fork)
	}
}

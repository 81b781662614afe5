package web

import (
	"context"
	"crypto/rand"
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
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// TestSizesAddUp: one rounding rule for sizes: below 1 KB a size is said
// in bytes, so five 47-byte snapshots read "47 bytes" each and the tab's
// total is their sum; above it a total is the sum of what the rows show
// (two rows of 1.4 KB read "1 KB" each and total 2 KB, two of 2.6 MB "3
// MB" each and total 6 MB); the same snapshot says the same size on every
// page, and Browse says which size is which.
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
		op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: fmt.Sprintf("step %d", i)})
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
	// A second box on this host whose snapshots are above 1 KB: each adds
	// one file of random bytes, so the store cannot make it smaller.
	big := s.env.Box(t, snapshots.Owner(), "bright-owl")
	bigDir := s.env.Local.BoxDir(providers.Guest{Ref: big.GuestRef})
	var bigIDs []string
	for i, n := range []int{1400, 1400, 2_600_000, 2_600_000} {
		data := make([]byte, n)
		if _, err := rand.Read(data); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bigDir, fmt.Sprintf("data-%d.bin", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: big.Name, Name: fmt.Sprintf("data %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		s.env.Wait(t, op)
		bigIDs = append(bigIDs, sn.ID)
	}
	tab := html.UnescapeString(s.do(t, "GET", "/boxes/snapshots", nil, nil).Body.String())
	sizeOf := regexp.MustCompile(` · (\d+(?:\.\d)?) (bytes?|KB|MB|GB)\b`)
	unit := map[string]float64{"byte": 1, "bytes": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}
	var shown float64
	for i, id := range append(append([]string{}, ids...), bigIDs...) {
		row := tab[strings.Index(tab, `id="snap-`+id+`"`):]
		row = row[:strings.Index(row, "</li>")]
		m := sizeOf.FindStringSubmatch(row)
		if m == nil {
			t.Fatalf("the row of snapshot %d says no size:\n%s", i, row)
		}
		if want := []string{"1 KB", "1 KB", "3 MB", "3 MB"}; i >= len(ids) && m[1]+" "+m[2] != want[i-len(ids)] {
			t.Errorf("a row says %q, want %q:\n%s", m[1]+" "+m[2], want[i-len(ids)], row)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		shown += v * unit[m[2]]
	}
	if want := fmt.Sprintf("9 snapshots · %s on this host", providers.GB(int64(shown))); !strings.Contains(tab, want) {
		t.Errorf("the tab's line is not the sum of what its rows show, %q:\n%s", want, tab[strings.Index(tab, `class="tabline"`):][:200])
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

// TestShownBytesTwins: the database rounds the tab's totals with
// shown_bytes, and it rounds every size as providers.Shown, the rows' rule.
func TestShownBytesTwins(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	for _, n := range []int64{0, 1, 47, 999, 1000, 1400, 1499, 1500, 999_499, 999_500, 2_600_000, 99_499_999, 99_500_000,
		1_240_000_000, 1_250_000_000, 9_949_999_999, 9_950_000_000, 12_500_000_000} {
		var got int64
		if err := s.env.Pool.QueryRow(context.Background(), "SELECT shown_bytes($1)", n).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := providers.Shown(n); got != want {
			t.Errorf("shown_bytes(%d) = %d, providers.Shown says %d (%s)", n, got, want, providers.GB(n))
		}
	}
}

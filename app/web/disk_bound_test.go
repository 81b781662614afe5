package web

import (
	"context"
	"errors"
	"html"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// TestABoxAtItsDiskBoundSaysSoOnItsPage: a local box whose own file system
// is full (its 32 MiB disk bound reached) runs on, and its page's facts say
// so under Disk, in the words the API and the CLI say, not under Stopped.
func TestABoxAtItsDiskBoundSaysSoOnItsPage(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	if exact, why, _ := s.env.Local.DiskBounding(); !exact {
		if os.Getenv("CI") == "true" {
			t.Fatal("a box cannot be a file system of its own here: " + why)
		}
		t.Skip("a box cannot be a file system of its own here: " + why)
	}
	ctx := context.Background()
	if err := s.env.Boxes.SaveTemplate(ctx, snapshots.Owner(), snapshots.BoxTemplate{Name: "small-disk", Backend: "local", Kind: "linux",
		Limits: providers.BoxLimits{DiskBytes: 32 << 20}}); err != nil {
		t.Fatal(err)
	}
	b, err := s.env.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "full-disk", Template: "small-disk"})
	if err != nil {
		t.Fatal(err)
	}
	g := providers.Guest{Backend: "local", Kind: "linux", Ref: b.GuestRef}
	f, err := os.Create(filepath.Join(s.env.Local.BoxDir(g), "filler"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	for werr := error(nil); !errors.Is(werr, syscall.ENOSPC); {
		if _, werr = f.Write(chunk); werr != nil && !errors.Is(werr, syscall.ENOSPC) {
			t.Fatal(werr)
		}
	}
	f.Close()
	st, err := s.env.Local.Status(ctx, g)
	if err != nil || st.DiskStop == nil || !st.DiskStop.Full {
		t.Fatalf("the full box's status is %+v (%v), want at its disk bound", st, err)
	}
	words := snapshots.DiskStopWords("full-disk", st.DiskStop)
	w := s.do(t, "GET", "/boxes/full-disk", nil, nil)
	body := html.UnescapeString(w.Body.String())
	if !strings.Contains(body, "<dt>Disk</dt><dd>"+words+"</dd>") {
		t.Fatalf("the box's page does not say, under Disk, %q:\n%s", words, body)
	}
	if strings.Contains(body, "<dt>Stopped</dt>") {
		t.Fatal("the box's page says it stopped, though it runs on")
	}
}

// TestATemplatesDiskSaysWhenANewSizeReachesABox: the box template form says
// by its Disk field that a change reaches a local box at its reset, and
// that until then it keeps the disk it was made with (its file system is
// not grown in place).
func TestATemplatesDiskSaysWhenANewSizeReachesABox(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	body := html.UnescapeString(s.do(t, "GET", "/settings/templates", nil, nil).Body.String())
	want := `aria-describedby="t-disk-h">` + "\n" + `  <p class="hint" id="t-disk-h">A change reaches a local box at its reset: until then it keeps the disk it was made with.</p>`
	if !strings.Contains(body, want) {
		t.Fatalf("the template form does not say by Disk %q:\n%s", want, body)
	}
}

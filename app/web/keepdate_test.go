package web

import (
	"context"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// TestKeepDateAgrees: the Keep dialog's date field holds the day as
// year-month-day, whatever the browser's locale, and the words beside it
// name the same day.
func TestKeepDateAgrees(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	b := s.env.Box(t, snapshots.Owner(), "amber-fox")
	op, sn, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: b.Name, Name: "before the migration"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	body := html.UnescapeString(s.do(t, "GET", "/boxes/amber-fox/snapshots/"+sn.ID+"/keep", nil, nil).Body.String())
	m := regexp.MustCompile(`<input id="dlg-until" type="text" name="until" value="(\d{4}-\d{2}-\d{2})"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the keep date is not a year-month-day field:\n%s", body)
	}
	day, err := time.Parse("2006-01-02", m[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, m[1]+" is "+day.Format("Mon 2 Jan 2006")+".") {
		t.Errorf("the field's hint does not name %s as %s:\n%s", m[1], day.Format("Mon 2 Jan 2006"), body)
	}
	if w := regexp.MustCompile(`until (\d{1,2} [A-Z][a-z]{2})`).FindAllStringSubmatch(body, -1); len(w) == 0 {
		t.Errorf("the words say no date:\n%s", body)
	} else {
		for _, u := range w {
			if u[1] != day.Format("2 Jan") {
				t.Errorf("the words say until %s beside a field holding %s", u[1], m[1])
			}
		}
	}
}

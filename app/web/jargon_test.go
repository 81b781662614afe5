package web

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// jargon are words a person must never read on a page: the
// specification's gate names, references to documents or their parts,
// and the broken phrases people saw.
var jargon = []*regexp.Regexp{
	regexp.MustCompile(`\bG(1[0-7]|[1-9])\b`),
	regexp.MustCompile(`README`),
	regexp.MustCompile(`(?i)\bsections?\b`),
	regexp.MustCompile(`(?i)\bunit \d`),
	regexp.MustCompile(`without nothing`),
	regexp.MustCompile(`boxsnap did not do that`),
	regexp.MustCompile(`\b\d+ match\.`),
}

var (
	tagAttrWords = regexp.MustCompile(`\b(?:title|aria-label|placeholder|alt|data-announce)="([^"]*)"`)
	anyTag       = regexp.MustCompile(`(?s)<[^>]+>`)
)

// readWords is what a person reads on a page: its text, and the words of
// its controls' names and hints.
func readWords(page string) string {
	var b strings.Builder
	for _, m := range tagAttrWords.FindAllStringSubmatch(page, -1) {
		b.WriteString(html.UnescapeString(m[1]) + "\n")
	}
	b.WriteString(html.UnescapeString(anyTag.ReplaceAllString(page, " ")))
	return b.String()
}

// TestNoJargonOnAnyPage renders every page and dialog it can reach, signed
// in and out, and fails on a gate's name (a G and its number), a
// reference to a document or its parts ("README", a section's or a
// unit's number) and the broken phrases people read ("without nothing",
// "4 match.").
func TestNoJargonOnAnyPage(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{})
	ctx := context.Background()
	_, agent, _ := s.env.Thread(t, "Fix the sign-in flow")
	s.env.Box(t, agent, "amber-fox")
	s.env.Box(t, snapshots.Owner(), "brisk-lake")
	op, _, err := s.env.Take.Take(ctx, agent, take.TakeRequest{Box: "amber-fox", Name: "before the migration", Note: "schema v2"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	op, mine, err := s.env.Take.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: "brisk-lake", Name: "clean install"})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, op)
	kop, err := s.env.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "brisk-lake", Snapshot: mine.ID, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, kop)
	rop, err := s.env.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: "brisk-lake", Snapshot: mine.ID})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Wait(t, rop)

	paths := []string{"/boxes", "/boxes/threads", "/boxes/snapshots", "/boxes/snapshots?q=migration", "/boxes/snapshots?q=nothing-matches",
		"/boxes/snapshots?select=1", "/approvals", "/boxes/trash", "/import", "/settings/snapshots", "/settings/templates", "/settings/tokens", "/settings/hosts",
		"/settings", "/no/such/page", "/boxes/no-such-box"}
	for _, box := range []string{"amber-fox", "brisk-lake"} {
		paths = append(paths, "/boxes/"+box, "/boxes/"+box+"/take", "/boxes/"+box+"/reset", "/boxes/"+box+"/release",
			"/boxes/"+box+"/history/delete")
	}
	list, err := s.env.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range list {
		for _, x := range g.Snapshots {
			base := "/boxes/" + g.Box.Name + "/snapshots/" + x.ID
			for _, d := range []string{"restore", "fork", "keep", "delete", "rename", "note", "save", "unsave", "export", "share", "files", "compare"} {
				paths = append(paths, base+"/"+d)
			}
		}
	}
	for _, p := range paths {
		w := s.do(t, "GET", p, nil, nil)
		if w.Code >= 500 {
			t.Errorf("%s answered %d", p, w.Code)
		}
		checkJargon(t, p, w.Body.String())
	}
	// Signed out: sign-in, and the first run.
	for _, p := range []string{"/signin", "/setup/not-a-link"} {
		r := httptest.NewRequest("GET", p, nil)
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		checkJargon(t, p, w.Body.String())
	}
	// A refusal's page.
	w := s.do(t, "POST", "/boxes/no-such-box/take", nil, nil)
	if w.Code == http.StatusOK {
		t.Errorf("a take of no box answered %d", w.Code)
	}
	checkJargon(t, "a refused take", w.Body.String())
}

func checkJargon(t *testing.T, where, page string) {
	t.Helper()
	words := readWords(page)
	for _, j := range jargon {
		if m := j.FindString(words); m != "" {
			i := strings.Index(words, m)
			t.Errorf("%s reads %q: …%s…", where, m, strings.Join(strings.Fields(words[max(0, i-80):min(len(words), i+80)]), " "))
		}
	}
}

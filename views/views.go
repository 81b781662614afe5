package views

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed layouts/*.html partials/*.html pages/*.html
var files embed.FS

// Views holds every page, each parsed with the layout.
type Views struct {
	pages map[string]*template.Template
}

// Funcs are the helpers templates may call.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"since": func(t time.Time) string { return time.Since(t).Round(time.Minute).String() },
		"date":  func(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") },
		"add":   func(a, b int) int { return a + b },
	}
}

// New parses the layouts and every page. A page file defines the blocks
// "title" and "content"; the layout renders them.
func New() (*Views, error) {
	layout, err := template.New("layout").Funcs(Funcs()).ParseFS(files, "layouts/*.html", "partials/*.html")
	if err != nil {
		return nil, fmt.Errorf("views: layouts: %w", err)
	}
	names, err := fs.Glob(files, "pages/*.html")
	if err != nil {
		return nil, fmt.Errorf("views: %w", err)
	}
	v := &Views{pages: map[string]*template.Template{}}
	for _, n := range names {
		t, err := template.Must(layout.Clone()).ParseFS(files, n)
		if err != nil {
			return nil, fmt.Errorf("views: %s: %w", n, err)
		}
		v.pages[strings.TrimSuffix(path.Base(n), ".html")] = t
	}
	return v, nil
}

// Page is what every full page's data carries for the layout.
type Page struct {
	Title    string
	SignedIn bool
	Nav      string // the nav item that is current
	Flash    string
}

// RenderBlock writes one named block of page name alone: the fragment an
// htmx request's target asks for (a card, a list, a dialog). It renders
// into a buffer first and sets Vary: HX-Request, as Render does.
func (v *Views) RenderBlock(w http.ResponseWriter, status int, name, block string, data any) error {
	t, ok := v.pages[name]
	if !ok {
		return fmt.Errorf("views: no page %q", name)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, data); err != nil {
		return fmt.Errorf("views: render %s/%s: %w", name, block, err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Add("Vary", "HX-Request")
	w.WriteHeader(status)
	_, err := buf.WriteTo(w)
	return err
}

// Render writes page name with data. An htmx request that is not a boosted
// navigation gets the "content" block alone; everything else the whole page.
// It renders into a buffer first, so an error sends a clean 500.
func (v *Views) Render(w http.ResponseWriter, r *http.Request, status int, name string, data any) error {
	t, ok := v.pages[name]
	if !ok {
		return fmt.Errorf("views: no page %q", name)
	}
	block := "page"
	if r != nil && r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-Boosted") != "true" {
		block = "content"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, block, data); err != nil {
		return fmt.Errorf("views: render %s: %w", name, err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Add("Vary", "HX-Request")
	w.WriteHeader(status)
	_, err := buf.WriteTo(w)
	return err
}

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
		"add":   func(a, b int) int { return a + b },
		"icon":  icon,
		"state": state,
	}
}

// icons are the pages' icons as inline SVG, drawn with the text's colour:
// a font's symbol may have no glyph (Fork's ⑂ has none in Debian's fonts).
// Each is decorative; its control carries the words.
var icons = map[string]string{
	"restore": `<path d="M3 12a9 9 0 1 0 3-6.7"/><path d="M3 4v5h5"/>`,
	"fork":    `<circle cx="6" cy="5" r="2"/><circle cx="18" cy="5" r="2"/><circle cx="12" cy="19" r="2"/><path d="M6 7v2a3 3 0 0 0 3 3h6a3 3 0 0 0 3-3V7"/><path d="M12 12v5"/>`,
	"more":    `<circle cx="5" cy="12" r="1.3" fill="currentColor"/><circle cx="12" cy="12" r="1.3" fill="currentColor"/><circle cx="19" cy="12" r="1.3" fill="currentColor"/>`,
	"gear":    `<path d="M4 6h10M18 6h2M4 12h4M12 12h8M4 18h12M20 18h0"/><circle cx="16" cy="6" r="2"/><circle cx="10" cy="12" r="2"/><circle cx="18" cy="18" r="2"/>`,
	"close":   `<path d="M6 6l12 12M18 6 6 18"/>`,
	"back":    `<path d="M15 5l-7 7 7 7"/>`,
	"next":    `<path d="M9 5l7 7-7 7"/>`,
	"thread":  `<path d="M4 5h16v11H9l-5 4z"/>`,
	"place":   `<path d="M12 21s-7-6.2-7-11a7 7 0 0 1 14 0c0 4.8-7 11-7 11z"/><circle cx="12" cy="10" r="2.5"/>`,
	"running": `<circle cx="12" cy="12" r="6" fill="currentColor"/>`,
	"stopped": `<rect x="6" y="6" width="12" height="12" rx="2"/>`,
	"failed":  `<circle cx="12" cy="12" r="9"/><path d="M9 9l6 6M15 9l-6 6"/>`,
	"warning": `<path d="M12 3 2 20h20z"/><path d="M12 10v4M12 17v.5"/>`,
	"mine":    `<rect x="3" y="4" width="18" height="12" rx="2"/><path d="M8 20h8M12 16v4"/>`,
	"menu":    `<path d="M4 7h16M4 12h16M4 17h16"/>`,
}

// stateOf names a state word's look: running, stopped, busy (taking,
// restoring, deleting, keeping, starting: a spinner), failed, attention
// (amber) or plain.
func stateOf(word string) string {
	w := strings.ToLower(word)
	switch {
	case strings.HasPrefix(w, "running"):
		return "running"
	case strings.HasPrefix(w, "stopped"):
		return "stopped"
	case strings.HasPrefix(w, "taking"), strings.HasPrefix(w, "restoring"), strings.HasPrefix(w, "deleting"),
		strings.HasPrefix(w, "keeping"), strings.HasPrefix(w, "stopping"), strings.HasPrefix(w, "starting"), strings.HasPrefix(w, "forking"):
		return "busy"
	case strings.Contains(w, "failed"), strings.HasPrefix(w, "lost"), strings.HasPrefix(w, "incomplete"):
		return "failed"
	case strings.HasPrefix(w, "unavailable"), strings.Contains(w, "unknown"), strings.Contains(w, "missing"):
		return "attention"
	}
	return "plain"
}

// state draws a state as its icon and its word, in the state's colour:
// never colour alone. A busy state's icon is a spinner, which stops under
// reduced motion.
func state(word string) template.HTML {
	look := stateOf(word)
	var mark string
	switch look {
	case "busy":
		mark = `<span class="spinner" aria-hidden="true"></span>`
	case "running", "stopped", "failed":
		mark = string(icon(look))
	case "attention":
		mark = string(icon("warning"))
	}
	return template.HTML(`<span class="state is-` + look + `">` + mark + template.HTMLEscapeString(word) + `</span>`)
}

// icon draws the named icon, 18 px, hidden from screen readers.
func icon(name string) template.HTML {
	return template.HTML(`<svg class="ico" width="18" height="18" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">` + icons[name] + `</svg>`)
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

// Whole is what the layout of a whole page reads: the page's own data,
// whose Page field (a Page, or a page's own with Title, SignedIn, Nav and
// Flash) it shows in the head and the navigation, and the count of
// requests waiting for the person's word, beside Requests in the
// navigation.
type Whole struct {
	Data     any
	Requests int
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

// Partial reports whether r is an htmx request that is not a boosted
// navigation: it gets a page's "content" block alone, without the layout.
func Partial(r *http.Request) bool {
	return r != nil && r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-Boosted") != "true"
}

// Render writes page name: for a Partial request its "content" block with
// whole.Data alone; for everything else the whole page, the layout reading
// whole. It renders into a buffer first, so an error sends a clean 500.
func (v *Views) Render(w http.ResponseWriter, r *http.Request, status int, name string, whole Whole) error {
	t, ok := v.pages[name]
	if !ok {
		return fmt.Errorf("views: no page %q", name)
	}
	var data any = whole
	block := "page"
	if Partial(r) {
		block, data = "content", whole.Data
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

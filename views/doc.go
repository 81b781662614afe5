// Package views holds boxsnap's HTML templates (layouts, partials shared by
// every page, pages), embedded and parsed once at start, so a missing or
// broken template fails the start rather than a request. It renders a whole
// page, its "content" block for htmx, or one named block (a card, a list, a
// dialog), always into a buffer first, so a template error never sends half
// a page. It imports nothing of boxsnap.
package views

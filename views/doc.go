// Package views holds boxsnap's HTML templates (layouts, pages, fragments),
// embedded and parsed once at start, so a missing or broken template fails
// the start rather than a request. It renders into a buffer, so a template
// error never sends half a page. It imports nothing of boxsnap.
package views

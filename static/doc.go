// Package static holds boxsnap's CSS, the vendored htmx (4.0.1, from npm's
// htmx.org, dist/htmx.min.js) and boxsnap.js (dialogs, focus, the live
// region; no inline script, as the Content-Security-Policy forbids them),
// served from /static. No CDN, no build step. It imports nothing of boxsnap.
package static

import "embed"

// Files are the static files, served under /static/.
//
//go:embed css js favicon.svg
var Files embed.FS

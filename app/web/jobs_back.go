package web

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
)

// jobsBanner is the way back to boxsnap on River's job dashboard, which
// brings its own page and has no option for a link of ours: its HTML page
// gets this link in its body. River's sidebar is fixed from the top of the
// window, its logo at its head, so a bar across the top covered both: the
// link floats in the bottom right corner instead, small, under River's
// dialogs (its narrow window's sidebar is one) and over its page. On a
// window narrower than 560 px, River's list of jobs keeps its
// Fewer and More buttons in the middle of the bottom edge, where the
// corner reaches them: there the link is a line at the top of the page,
// in its flow, over nothing. Its own styles, as River's page has none of
// boxsnap's.
const jobsBanner = `<a href="/boxes" id="boxsnap-back" title="River's job dashboard: every snapshot operation is a job here." ` +
	`style="position:fixed;right:16px;bottom:16px;z-index:40;padding:6px 12px;border-radius:6px;` +
	`font:14px/1.5 system-ui,sans-serif;background:#1b1d21;color:#e6e8ec;text-decoration:none;` +
	`box-shadow:0 1px 4px rgba(0,0,0,.3)">← Back to boxsnap</a>` +
	`<style>@media (max-width:560px){#boxsnap-back{position:static!important;display:block;border-radius:0!important;` +
	`box-shadow:none!important;text-align:center}}</style>`

// withBackLink wraps River's dashboard: its HTML page (not its API or
// assets) gets the bar back to boxsnap.
func withBackLink(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || strings.Contains(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		bw := &bufferedHTML{ResponseWriter: w}
		next.ServeHTTP(bw, r)
		bw.finish()
	})
}

// bufferedHTML holds an uncompressed HTML answer back to add the bar; any
// other answer passes through.
type bufferedHTML struct {
	http.ResponseWriter
	status  int
	holding bool
	decided bool
	buf     bytes.Buffer
}

func (b *bufferedHTML) WriteHeader(status int) {
	if b.decided {
		return
	}
	b.decided = true
	h := b.Header()
	if strings.HasPrefix(h.Get("Content-Type"), "text/html") && h.Get("Content-Encoding") == "" && status == http.StatusOK {
		b.holding, b.status = true, status
		return
	}
	b.ResponseWriter.WriteHeader(status)
}

func (b *bufferedHTML) Write(p []byte) (int, error) {
	if !b.decided {
		if b.Header().Get("Content-Type") == "" {
			b.Header().Set("Content-Type", http.DetectContentType(p))
		}
		b.WriteHeader(http.StatusOK)
	}
	if b.holding {
		return b.buf.Write(p)
	}
	return b.ResponseWriter.Write(p)
}

func (b *bufferedHTML) finish() {
	if !b.holding {
		return
	}
	page := b.buf.Bytes()
	if i := bytes.Index(page, []byte("<body")); i >= 0 {
		if j := bytes.IndexByte(page[i:], '>'); j >= 0 {
			at := i + j + 1
			page = append(append(append([]byte{}, page[:at]...), jobsBanner...), page[at:]...)
		}
	}
	b.Header().Set("Content-Length", strconv.Itoa(len(page)))
	b.ResponseWriter.WriteHeader(b.status)
	_, _ = b.ResponseWriter.Write(page)
}

package jsonin

import (
	"mime"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Only refuses, with refuse's answer, a body that says it is not JSON, and
// caps a body at maxBytes; a POST to a path ending in /import (export
// files, not JSON) is capped at importBytes instead.
func Only(maxBytes, importBytes int64, refuse func(http.ResponseWriter)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/import") {
				r.Body = http.MaxBytesReader(w, r.Body, importBytes)
				next.ServeHTTP(w, r)
				return
			}
			if ct := r.Header.Get("Content-Type"); ct != "" && r.ContentLength != 0 {
				if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
					refuse(w)
					return
				}
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
			next.ServeHTTP(w, r)
		})
	}
}

// TextOnly refuses, with refuse's answer, a path or query that is not
// text: invalid UTF-8 or control characters name nothing, and the database
// refuses a NUL.
func TextOnly(refuse func(http.ResponseWriter)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			bad := !IsText(r.URL.Path)
			for k, vs := range r.URL.Query() {
				bad = bad || !IsText(k)
				for _, v := range vs {
					bad = bad || !IsText(v)
				}
			}
			if bad {
				refuse(w)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// IsText says whether s is valid UTF-8 without control characters.
func IsText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

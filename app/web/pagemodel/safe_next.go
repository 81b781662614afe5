package pagemodel

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SafeNext keeps a redirect after sign-in on this site: a path starting with
// one slash, with no backslash, no space or control character (a browser
// drops a tab, so "/\t/evil.example" is "//evil.example" to it), no scheme
// and no host. Anything else is "/".
func SafeNext(next string) string {
	if next == "" || len(next) > 2048 || next[0] != '/' || strings.HasPrefix(next, "//") ||
		strings.ContainsRune(next, '\\') || !utf8.ValidString(next) ||
		strings.ContainsFunc(next, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) || IsBidi(r) }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	return next
}

func IsBidi(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0x200E || r == 0x200F || r == 0x061C
}

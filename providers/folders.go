package providers

import (
	"strings"
	"unicode"
)

// CheckFolderName refuses, in words, a template folder's name that could
// lead out of the templates folder: a full path, "." or "..", a name with a
// slash, or one with control characters. It is a RefusedError. A backend
// that resolves the name also refuses a link leading out (the local
// backend's Acquire); this is the check of the name alone, the same for the
// owner as for anyone.
func CheckFolderName(name string) error {
	switch {
	case strings.HasPrefix(name, "/"):
		return &RefusedError{Why: "A box template's folder is a name inside the templates folder, not a full path."}
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsFunc(name, unicode.IsControl):
		return &RefusedError{Why: "A box template's folder is one folder's name inside the templates folder: no slashes, no “..”."}
	}
	return nil
}

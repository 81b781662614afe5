package snapshots

import (
	"unicode"
	"unicode/utf8"
)

// CheckLine refuses, in words, text that cannot be a name or a title: text
// that is not valid UTF-8, or that holds a NUL, a control character or a
// character that changes the direction text is shown in (a right-to-left
// override shows "exe.txt" for "txt.exe"). what names the text, "A thread's
// title". Every name and title from outside passes it before it is stored.
func CheckLine(what, s string) error {
	if !utf8.ValidString(s) {
		return refusal(CodeInvalid, notUTF8Words(what))
	}
	for _, r := range s {
		if r == 0 || unicode.IsControl(r) || isBidiControl(r) {
			return refusal(CodeInvalid, lineControlWords(what))
		}
	}
	return nil
}

// CheckText refuses, in words, text of several lines (a note, a command)
// that is not valid UTF-8 or holds a NUL; line breaks and tabs are allowed.
func CheckText(what, s string) error {
	if !utf8.ValidString(s) {
		return refusal(CodeInvalid, notUTF8Words(what))
	}
	for _, r := range s {
		if r == 0 || isBidiControl(r) || (unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r') {
			return refusal(CodeInvalid, textControlWords(what))
		}
	}
	return nil
}

// isBidiControl reports the Unicode characters that reorder how text is
// shown: the embeddings, overrides and isolates, and the directional marks.
func isBidiControl(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	}
	return false
}

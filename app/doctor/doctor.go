// Package doctor checks a boxsnap install: its database, its migrations and
// each configured backend, and prints each failure with its fix. It never
// prints a secret: checks speak of what they found, never of tokens or
// passwords. It must never import app/web or app/api.
package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Result is one check's outcome.
type Result struct {
	Name   string
	OK     bool
	Detail string // what was found
	Fix    string // what to do, when not OK
}

// Check is one named check.
type Check func(ctx context.Context) []Result

// Run runs every check in order and prints each result; it reports whether
// all passed.
func Run(ctx context.Context, w io.Writer, checks ...Check) bool {
	all := true
	for _, c := range checks {
		for _, r := range c(ctx) {
			mark := "ok  "
			if !r.OK {
				mark = "FAIL"
				all = false
			}
			fmt.Fprintf(w, "%s  %-22s %s\n", mark, r.Name, oneLine(r.Detail))
			if !r.OK && r.Fix != "" {
				fmt.Fprintf(w, "      %-22s fix: %s\n", "", oneLine(r.Fix))
			}
		}
	}
	if all {
		fmt.Fprintln(w, "All checks passed.")
	} else {
		fmt.Fprintln(w, "Some checks failed; each says its fix.")
	}
	return all
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

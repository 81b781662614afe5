package restore

import (
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// IsCopyStep reports whether step is one of a held copy's.
func IsCopyStep(step string) bool { return strings.HasPrefix(step, "copy-") }

// IndexOf answers where step stands in order, or 0 when it is not in it.
func IndexOf(order []providers.RestoreStep, step providers.RestoreStep) int {
	for i, s := range order {
		if s == step {
			return i
		}
	}
	return 0
}

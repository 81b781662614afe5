// Package wordshape holds the check the words tests of the core's
// packages share: a phrase a person or an agent reads is read as words
// (no space at an end or doubled, no verb of fmt left over, no doubled
// word, its ‘’ paired).
//
// It imports nothing of boxsnap, so that any package's own tests may use
// it.
package wordshape

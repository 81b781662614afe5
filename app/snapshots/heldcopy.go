package snapshots

import (
	"errors"

	"github.com/boxsnap/boxsnap/providers"
)

// Steps of a held copy, each recorded before it runs. A release cut short at any of them makes that copy again from its
// clone step, which uses a copy already a template and remakes one that is
// not: a copy that is not yet a template is never trusted.
const (
	StepCopyClone    = "copy-clone"
	StepCopyDisarm   = "copy-disarm"
	StepCopyTemplate = "copy-template"
	// StepUnkeepDelete is "Release and delete it"'s: a kept snapshot stops
	// being kept and is deleted, its task left to the job's snooze.
	StepUnkeepDelete = "unkeep-delete"
)

// EvReleaseStopped is the box log's event for a release that stopped before
// any guest went.
const EvReleaseStopped = "release-stopped"

// reason is an error's words for a person, as a refusal says them.
func Reason(err error) string {
	if r, ok := AsRefusal(err); ok {
		return r.Words
	}
	var pr *providers.RefusedError
	if errors.As(err, &pr) {
		return pr.Why
	}
	return err.Error()
}

// PreferHeld says whether a listing's h stands for its snapshot before prev,
// the same snapshot listed elsewhere: a copy is never trusted over its
// source, so a held copy that is not a template loses to the snapshot it was
// made from, and the first complete one listed stays.
func PreferHeld(h, prev providers.HeldSnapshot) bool {
	return prev.Incomplete && !h.Incomplete
}

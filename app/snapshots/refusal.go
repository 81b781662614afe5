package snapshots

import (
	"errors"
	"fmt"
	"net/http"
)

// Refusal is a refusal in the specification's words. Nothing has changed
// when one is returned. Status is the HTTP status the API answers with;
// TryAgain is set when the refusal holds only for now (decided during unit
// 5: a storage too full, a backup's lock).
type Refusal struct {
	Code     string
	Words    string
	Status   int
	TryAgain bool
}

func (r *Refusal) Error() string { return r.Words }

func refuse(code string, status int, format string, args ...any) *Refusal {
	return &Refusal{Code: code, Status: status, Words: fmt.Sprintf(format, args...)}
}

// Refusal codes.
const (
	CodeNotFound  = "not_found"
	CodeInvalid   = "invalid"
	CodeForbidden = "forbidden"
	CodeConflict  = "conflict"
	CodeLimit     = "limit"
	CodeRoom      = "room"
	CodeLocked    = "locked"
	CodeGuard     = "guard"
	CodeBusy      = "busy"
	CodePlan      = "plan"
)

// AsRefusal returns err's Refusal, if it is one.
func AsRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// notFound is what a caller reads for a snapshot it may not see as for one
// that does not exist, so a guessed ID tells nothing (section 3, G12).
func snapshotNotFound(id string) *Refusal {
	return refuse(CodeNotFound, http.StatusNotFound, "No snapshot %s that you can see.", id)
}

func boxNotFound(ref string) *Refusal {
	return refuse(CodeNotFound, http.StatusNotFound, "No box %s that you can see.", ref)
}

func invalid(format string, args ...any) *Refusal {
	return refuse(CodeInvalid, http.StatusBadRequest, format, args...)
}

package snapshots

// A keep's and a delete's requests and results, which the
// pages, the API, the dry runs and the sweeps speak as well as package
// keep, which runs them.

import "time"

// KeepRequest asks to keep a snapshot: for Days from today (0: the
// setting), or until a date.
type KeepRequest struct {
	Box       string
	Snapshot  string
	Days      int
	Until     *time.Time
	RequestID string
}

// DeleteRequest asks to delete one snapshot.
type DeleteRequest struct {
	Box       string
	Snapshot  string
	RequestID string
}

// DeleteResult is what a finished delete answers.
type DeleteResult struct {
	Snapshot string `json:"snapshot"`
	Name     string `json:"name"`
	Freed    *int64 `json:"freedBytes,omitempty"`
}

// DeleteParams are a delete's parameters: none for the person's, the CLI's
// or an agent's; the room sweep's says its change (evict-room) and why.
type DeleteParams struct {
	Change Change `json:"change,omitempty"`
	Why    string `json:"why,omitempty"`
}

// ByWhy is the box log's why for a delete (by you, by the agent, ...).
func ByWhy(c Caller) string {
	switch c.Kind {
	case CallerOwner, CallerCLI, CallerAgent:
		return ByWords(string(c.Kind), "", "")
	}
	return c.Why
}

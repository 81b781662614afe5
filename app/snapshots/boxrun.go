package snapshots

import (
	"encoding/json"
	"maps"

	"github.com/boxsnap/boxsnap/providers"
)

// BoxRun is how a box runs, as it was made or last reset: the database
// keeps it (box_runs) so a box moved or taken over onto another host is
// made there running as it did, its environment included, which no
// snapshot records. Published ports are not in it: on another host they
// could collide.
type BoxRun struct {
	Command   string              `json:"command,omitempty"`
	User      string              `json:"user,omitempty"`
	Env       map[string]string   `json:"env,omitempty"`
	Limits    providers.BoxLimits `json:"limits"`
	NoNetwork bool                `json:"noNetwork,omitempty"`
}

// RunOf is the run a box made with spec runs with.
func RunOf(spec providers.BoxSpec) BoxRun {
	return BoxRun{Command: spec.Command, User: spec.User, Env: maps.Clone(spec.Env), Limits: spec.Limits, NoNetwork: spec.NoNetwork}
}

// MarshalRun is r as the database keeps it.
func MarshalRun(r BoxRun) (json.RawMessage, error) { return json.Marshal(r) }

// UnmarshalRun reads a run the database keeps.
func UnmarshalRun(b json.RawMessage) (BoxRun, error) {
	var r BoxRun
	err := json.Unmarshal(b, &r)
	return r, err
}

package snapshots

import (
	"github.com/boxsnap/boxsnap/providers"
)

// BoxTemplate is what the owner makes available for new boxes: an agent makes
// a box only from one of these, by name. Source is the backend's own: on the
// local backend a folder's name inside the templates folder, on Proxmox a
// template VMID, on Docker an image reference. Command, User, Env and Limits
// are for boxes with a process.
type BoxTemplate struct {
	Name    string `json:"name"`
	Backend string `json:"backend"`
	Kind    string `json:"kind"`
	Source  string `json:"source,omitempty"`
	Command string `json:"command,omitempty"`
	// User is the unprivileged user the process runs as; empty is the
	// backend's own (boxsnap-box on the local backend).
	User      string              `json:"user,omitempty"`
	Env       map[string]string   `json:"env,omitempty"`
	Limits    providers.BoxLimits `json:"limits"`
	HasScreen bool                `json:"hasScreen,omitempty"`
	ScreenURL string              `json:"screenUrl,omitempty"`
	// NoNetwork turns the template's network off: a box made from it has
	// only its own loopback. Off by default: a box reaches outside
	// networks, never the host's loopback (local backend).
	NoNetwork bool `json:"noNetwork,omitempty"`
}

// The bounds of a box template.
const (
	MaxTemplateEnv     = 64
	MaxTemplateCommand = 4096
	MaxTemplateSource  = 255
)

package snapshots

import (
	"maps"
	"net"
	"net/url"
	"strconv"

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

var ()

// Spec is what the template asks of a backend for box.
func (t BoxTemplate) Spec(box providers.BoxIdentity, host string) providers.BoxSpec {
	spec := providers.BoxSpec{Box: box, Template: t.Source, Command: t.Command, Host: host,
		User: t.User, Env: maps.Clone(t.Env), Limits: t.Limits, NoNetwork: t.NoNetwork}
	if t.HasScreen {
		spec.Publish = ScreenPorts(t.ScreenURL)
	}
	return spec
}

// screenPorts is the port a box serves its screen on when its screen
// address is on the host's loopback (http://127.0.0.1:PORT/): the backend
// publishes it from the host's loopback into the box's own network.
func ScreenPorts(screen string) []int {
	u, err := url.Parse(screen)
	if err != nil || u.Port() == "" {
		return nil
	}
	if h := u.Hostname(); h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return nil
		}
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil || p < 1 || p > 65535 {
		return nil
	}
	return []int{p}
}

package boxes

import (
	"maps"
	"net"
	"net/url"
	"strconv"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// templateSpec is what the template t asks of a backend for box.
func templateSpec(t snapshots.BoxTemplate, box providers.BoxIdentity, host string) providers.BoxSpec {
	spec := providers.BoxSpec{Box: box, Template: t.Source, Command: t.Command, Host: host,
		User: t.User, Env: maps.Clone(t.Env), Limits: t.Limits, NoNetwork: t.NoNetwork}
	if t.HasScreen {
		spec.Publish = screenPorts(t.ScreenURL)
	}
	return spec
}

// screenPorts is the port a box serves its screen on when its screen
// address is on the host's loopback (http://127.0.0.1:PORT/): the backend
// publishes it from the host's loopback into the box's own network.
func screenPorts(screen string) []int {
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

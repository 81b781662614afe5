package proxmox_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	telmate "github.com/Telmate/proxmox-api-go/proxmox"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/providertest"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// stateTag is the tag that carries the conformance suite's state: Proxmox
// keeps tags in the config, so a snapshot holds them and a rollback puts
// them back, as it does the disk.
const stateTag = "st-"

func stateClient(t *testing.T, e *simEnv) *telmate.Client {
	t.Helper()
	return adminClient(t, e.sim, e.url)
}

// TestConformance runs the provider contract's suite against the simulator,
// on LXC and QEMU boxes cloned from a template, through the Telmate client.
func TestConformance(t *testing.T) {
	t.Parallel()
	t.Run("LXC", func(t *testing.T) { t.Parallel(); conformance(t, proxmox.KindLXC, lxcTmpl) })
	t.Run("QEMU", func(t *testing.T) { t.Parallel(); conformance(t, proxmox.KindQEMU, qemuTmpl) })
}

func conformance(t *testing.T, kind string, template int) {
	var envs sync.Map // test name → *simEnv
	h := providertest.Harness{
		Kind:    kind,
		Install: install,
		New: func(t *testing.T) (providers.Backend, providers.Boxes) {
			e := newSim(t, simOpts{})
			envs.Store(t.Name(), e)
			return e.be, e.be
		},
		NewGuest: func(t *testing.T, b providers.Backend, boxes providers.Boxes, id string) providers.Guest {
			g, err := boxes.Acquire(context.Background(), providers.BoxSpec{Box: providers.BoxIdentity{ID: id, Name: "conf-box", Kind: kind, Install: install},
				Template: itoa(template)})
			must(t, err)
			return g
		},
		WriteState: func(t *testing.T, b providers.Backend, g providers.Guest, state string) {
			e, _ := envs.Load(t.Name())
			c := stateClient(t, e.(*simEnv))
			tags := "boxsnap;boxsnap-reset-1;" + stateTag + strings.ReplaceAll(state, " ", "-")
			must(t, c.Put(context.Background(), map[string]any{"tags": tags}, "/nodes/"+g.Host+"/"+pveType(g.Kind)+"/"+g.Ref+"/config"))
		},
		ReadState: func(t *testing.T, b providers.Backend, g providers.Guest) string {
			e, _ := envs.Load(t.Name())
			c := stateClient(t, e.(*simEnv))
			conf, err := c.GetItemConfigMapStringInterface(context.Background(), "/nodes/"+g.Host+"/"+pveType(g.Kind)+"/"+g.Ref+"/config", "guest", "config")
			must(t, err)
			tags, _ := conf["tags"].(string)
			for _, tag := range strings.Split(tags, ";") {
				if s, ok := strings.CutPrefix(tag, stateTag); ok {
					return strings.ReplaceAll(s, "-", " ")
				}
			}
			return ""
		},
		Unreachable: func(t *testing.T) providers.Backend {
			be, err := proxmox.New(proxmox.Config{ID: "gone", URL: "https://127.0.0.1:1", TokenID: tokenID, TokenSecret: tokenSecret, Install: install})
			must(t, err)
			return be
		},
	}
	// The suite's tests each make their own backend: keep one simulator per
	// test name (the harness funcs receive the same t).
	providertest.Run(t, h)
}

func pveType(kind string) string {
	if kind == proxmox.KindLXC {
		return "lxc"
	}
	return "qemu"
}

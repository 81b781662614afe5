package pvesim

import "strings"

// deleteGuest is DELETE /nodes/{node}/{type}/{vmid} (VM.Allocate; QS
// API2/Qemu.pm destroy_vm, PC API2/LXC.pm destroy_vm): refused at once for
// a locked guest, or a running one (PC "unable to destroy CT 101 -
// container is running" unless force=1; QS "VM 101 is running - destroy
// failed"); otherwise a vzdestroy/qmdestroy task that
// removes the guest, its snapshots and its disks. A template whose base
// volume a linked clone still uses cannot go (PS Plugin.pm free_image).
func deleteGuest(c *call) (any, error) {
	s := c.s
	if err := s.check(c.who, vmPath(c), "VM.Allocate"); err != nil {
		return nil, err
	}
	g, err := c.guest()
	if err != nil {
		return nil, err
	}
	if l := g.conf["lock"]; l != "" && !(c.flag("skiplock") && c.who.root) {
		return nil, die("%s is locked (%s)", g.kind(), l)
	}
	if c.isSet("skiplock") && !c.who.root {
		return nil, paramErr(map[string]string{"skiplock": "Only root may use this option."})
	}
	if g.running {
		if g.typ == LXC {
			if !c.flag("force") {
				return nil, die("unable to destroy CT %d - container is running", g.vmid)
			}
		} else {
			return nil, die("VM %d is running - destroy failed", g.vmid)
		}
	}
	tt := "qmdestroy"
	if g.typ == LXC {
		tt = "vzdestroy"
		g.conf["lock"] = "destroyed"
	}
	t := s.newTask(s.nodes[g.node], tt, itoa(g.vmid), c.who, func(t *task, failMsg string) error {
		if failMsg != "" {
			return errorf("%s", failMsg)
		}
		if vol, ok := g.rootVolume(); ok && g.isTemplate() {
			for _, other := range s.guests {
				if ov, ok := other.rootVolume(); ok && other != g && ov.storage == vol.storage && strings.HasPrefix(ov.volname, vol.volname+"/") {
					delete(g.conf, "lock")
					return errorf("base volume '%s' is still in use by linked cloned", vol.volname)
				}
			}
		}
		delete(s.guests, g.vmid)
		return nil
	})
	t.log = append(t.log, "destroying "+g.kind()+" "+itoa(g.vmid))
	return t.upid, nil
}

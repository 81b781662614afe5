package web

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestSettingsQEMURow: with no QEMU backend Settings → Backends says how to
// add one; with one, it names it as boot labels it, with how its guests run, and what it offers from its own
// table: disk, or disk and memory, forks, and Keep by a held copy (here on
// a libvirtd that is not running: Snapshotting needs none).
func TestSettingsQEMURow(t *testing.T) {
	t.Parallel()
	const add = "No QEMU backend. To add one, install libvirt and QEMU on this host, set <code>BOXSNAP_QEMU_SOCKET</code>"
	page := newSite(t, coretest.Options{NoWorkers: true}).do(t, "GET", "/settings/snapshots/backends", nil, nil).Body.String()
	if !strings.Contains(page, add) {
		t.Fatalf("without a QEMU backend the page does not say how to add one:\n%s", page)
	}
	be, err := qemu.New(qemu.Config{ID: "qemu", Socket: t.TempDir() + "/libvirt-sock", Install: "in7anyinstall12", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, coretest.Options{NoWorkers: true, Extra: []snapshots.Backend{{ID: "qemu", Kind: "qemu", Label: "QEMU on this host", Note: "TCG: no vmx or svm", Snap: be, Boxes: be}}})
	page = s.do(t, "GET", "/settings/snapshots/backends", nil, nil).Body.String()
	if strings.Contains(page, "No QEMU backend") {
		t.Fatal("with a QEMU backend the page still says how to add one")
	}
	if !strings.Contains(page, `<td>QEMU on this host<span class="narrow-only">Linux</span><span class="muted line">TCG: no vmx or svm</span>`) || !strings.Contains(page, "Disk, or disk and memory; restores any; forks by full copy; keeps by held copy · no charge") {
		t.Fatalf("the QEMU row is not there, or not QEMU's table:\n%s", page)
	}
}

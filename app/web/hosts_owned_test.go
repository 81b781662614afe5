package web

import (
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/docker"
)

// TestHostsPageSaysWhoseBoxesAreAHosts: Settings → Hosts says which
// boxes belong to one host from the backends' own answers: with the local
// backend alone, local boxes; with a Docker engine on a unix socket (one
// host's, here not running: the answer needs none) and the Proxmox
// simulator beside it, Docker boxes too, and Proxmox boxes every host
// reaches alike. On the old code it said local boxes alone, whatever the
// backends.
func TestHostsPageSaysWhoseBoxesAreAHosts(t *testing.T) {
	t.Parallel()
	lead := func(s *site) string {
		t.Helper()
		page := s.do(t, "GET", "/settings/hosts", nil, nil).Body.String()
		_, after, ok := strings.Cut(page, "<p>Each host that runs boxsnap on this database. ")
		lead, _, ok2 := strings.Cut(after, " This is host <strong>")
		if !ok || !ok2 {
			t.Fatalf("the Hosts page has no lead sentence:\n%s", page)
		}
		return lead
	}
	plain := newSite(t, coretest.Options{NoWorkers: true})
	if got, want := lead(plain), "Local boxes each belong to one host, whose disk or daemon holds them, and only that host runs their operations."; got != want {
		t.Fatalf("with the local backend alone the Hosts page says\n%q\nwant\n%q", got, want)
	}
	dk, err := docker.New(docker.Config{ID: "docker", Host: "unix://" + t.TempDir() + "/docker.sock", Install: "in7anyinstall12"})
	if err != nil {
		t.Fatal(err)
	}
	pve, _ := simulatedProxmox(t)
	s := newSite(t, coretest.Options{NoWorkers: true, Install: simInstall,
		Extra: []snapshots.Backend{{ID: "docker", Kind: "docker", Label: "Docker (this host)", Snap: dk, Boxes: dk}, pve}})
	want := "Local boxes and Docker boxes each belong to one host, whose disk or daemon holds them, and only that host runs their operations. " +
		"Proxmox boxes every host reaches alike, and any host runs their operations."
	if got := lead(s); got != want {
		t.Fatalf("with a local Docker engine and Proxmox the Hosts page says\n%q\nwant\n%q", got, want)
	}
}

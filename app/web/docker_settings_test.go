package web

import (
	"context"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/docker"
)

// TestSettingsDockerRow: with no Docker backend the Settings page says how
// to add one; with one (here an engine that is not running: Snapshotting
// needs none), its row says what Docker offers, from its own table.
func TestSettingsDockerRow(t *testing.T) {
	t.Parallel()
	s := newSite(t, coretest.Options{NoWorkers: true})
	page := s.do(t, "GET", "/settings/snapshots/backends", nil, nil).Body.String()
	if !strings.Contains(page, "No Docker backend. To add one, set <code>BOXSNAP_DOCKER_HOST</code>") {
		t.Fatalf("without a Docker backend the page does not say how to add one:\n%s", page)
	}
	be, err := docker.New(docker.Config{ID: "docker", Host: "unix://" + t.TempDir() + "/docker.sock", Install: "in7anyinstall12"})
	if err != nil {
		t.Fatal(err)
	}
	s = newSite(t, coretest.Options{NoWorkers: true, Extra: []snapshots.Backend{{ID: "docker", Kind: "docker", Label: "Docker (this host)", Snap: be, Boxes: be}}})
	page = s.do(t, "GET", "/settings/snapshots/backends", nil, nil).Body.String()
	if strings.Contains(page, "No Docker backend") {
		t.Fatal("with a Docker backend the page still says how to add one")
	}
	if !strings.Contains(page, "<td>Docker (this host)") || !strings.Contains(page, "Disk; restores to a new guest; forks by full copy; keeps as is · no charge") {
		t.Fatalf("the Docker row is not there, or not Docker's table:\n%s", page)
	}
}

// TestNewBoxOffersDockerTemplates: the Machines tab's New box offers the
// owner's box templates by name, a Docker one with its image.
func TestNewBoxOffersDockerTemplates(t *testing.T) {
	t.Parallel()
	be, err := docker.New(docker.Config{ID: "docker", Host: "unix://" + t.TempDir() + "/docker.sock", Install: "in7anyinstall12"})
	if err != nil {
		t.Fatal(err)
	}
	s := newSite(t, coretest.Options{NoWorkers: true, Extra: []snapshots.Backend{{ID: "docker", Kind: "docker", Label: "Docker (this host)", Snap: be, Boxes: be}}})
	if err := s.env.Boxes.SaveTemplate(context.Background(), snapshots.Owner(), snapshots.BoxTemplate{Name: "busybox-docker", Backend: "docker", Kind: docker.KindLinux, Source: "boxsnap-demo/busybox:1"}); err != nil {
		t.Fatal(err)
	}
	page := s.do(t, "GET", "/boxes", nil, nil).Body.String()
	if !strings.Contains(page, `<option value="busybox-docker">busybox-docker · docker, boxsnap-demo/busybox:1</option>`) {
		t.Fatalf("New box does not offer the Docker template:\n%s", page)
	}
}

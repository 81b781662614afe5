package demo

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/providers/docker"
)

// DockerImage is the demo's image, built here with `docker import` from the
// host's static busybox (Debian's busybox-static), never pulled.
const DockerImage = "boxsnap-demo/busybox:1"

// DockerTemplate is the demo's box template on the Docker backend.
const DockerTemplate = "busybox-docker"

// SeedDocker makes the demo's Docker image, a box template of it and one box
// from that template, once.
func SeedDocker(ctx context.Context, bx *boxes.Boxes, be *docker.Backend, busybox string, logger *slog.Logger) error {
	owner := snapshots.Owner()
	boxes, err := bx.List(ctx, owner)
	if err != nil {
		return err
	}
	for _, b := range boxes {
		if b.BackendID == be.ID() {
			return nil
		}
	}
	files := map[string]string{
		"/srv/app/README.md":  "# crisp-dune\n\nA demo Docker box: its own data lives in its volume at /var/lib/docker.\n",
		"/srv/app/config.env": "PORT=8080\nMODE=demo\n",
	}
	if err := be.ImportBusyboxImage(ctx, DockerImage, busybox, files); err != nil {
		return fmt.Errorf("build the demo image: %w", err)
	}
	if _, err := bx.Template(ctx, DockerTemplate); err != nil {
		if err := bx.SaveTemplate(ctx, owner, snapshots.BoxTemplate{Name: DockerTemplate, Backend: be.ID(), Kind: docker.KindLinux,
			Source: DockerImage}); err != nil {
			return fmt.Errorf("save the demo's box template: %w", err)
		}
	}
	if _, err := bx.AcquireBox(ctx, owner, snapshots.BoxRequest{Name: "crisp-dune", Template: DockerTemplate}); err != nil {
		return fmt.Errorf("make the demo's Docker box: %w", err)
	}
	logger.Info("seeded the demo on Docker: one box from the busybox-docker template", "backend", be.ID())
	return nil
}

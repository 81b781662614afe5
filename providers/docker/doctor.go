package docker

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/moby/moby/client"
)

// Check is one result of the doctor's checks of this backend.
type Check struct {
	Name   string
	OK     bool
	Detail string
	Fix    string
}

// Doctor checks that the engine answers (and which API version was
// negotiated), that the copier image can be made, the data root's room, and
// names every box container left paused with the command that unpauses it.
func (b *Backend) Doctor(ctx context.Context) []Check {
	name := "backend " + b.cfg.ID
	if err := b.Ping(ctx); err != nil {
		return []Check{{Name: name, Detail: fmt.Sprintf("the Docker engine at %s does not answer: %v", b.where(), err), Fix: b.reachFix()}}
	}
	cctx, cancel := short(ctx)
	defer cancel()
	v, err := b.c.ServerVersion(cctx, client.ServerVersionOptions{})
	if err != nil {
		return []Check{{Name: name, Detail: "the engine answers but not its version: " + err.Error(), Fix: b.reachFix()}}
	}
	out := []Check{{Name: name, OK: true, Detail: fmt.Sprintf("Docker Engine %s at %s, API %s (negotiated)", v.Version, b.where(), b.c.ClientVersion())}}
	if b.cfg.BoxesGoWithHost {
		out = append(out, Check{Name: name + " keep", OK: true, Detail: "Keep is off: " + KeepOffWhy})
	}
	copier := Check{Name: name + " copier", OK: true, Detail: "volume copies run in " + copierImage}
	if _, err := b.c.ImageInspect(cctx, copierImage); err != nil {
		if _, serr := os.Stat(b.cfg.CopierBinary); serr != nil {
			copier = Check{Name: name + " copier", Detail: fmt.Sprintf("%s is not on the engine and %s, a static busybox it is made from, is missing", copierImage, b.cfg.CopierBinary),
				Fix: "install a static busybox (Debian: apt-get install busybox-static)"}
		} else {
			copier.Detail = fmt.Sprintf("%s will be made from %s at the first take", copierImage, b.cfg.CopierBinary)
		}
	}
	out = append(out, copier)
	if st, _, err := b.room(ctx, ""); err == nil && st.PercentFull > 0 {
		c := Check{Name: name + " room", OK: st.PercentFull < 90, Detail: fmt.Sprintf("the data root's file system is %.0f%% full, %s free", st.PercentFull, bytesWords(st.FreeBytes))}
		if !c.OK {
			c.Fix = "free room on the Docker host's data root (docker system df shows what holds it)"
		}
		out = append(out, c)
	}
	f := client.Filters{}.Add("label", labelInstall+"="+b.cfg.Install, labelRole+"="+roleBox).Add("status", "paused")
	if list, err := b.c.ContainerList(cctx, client.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range list.Items {
			n := strings.TrimPrefix(firstOr(c.Names, c.ID), "/")
			out = append(out, Check{Name: name + " " + n, Detail: n + " is paused, as a take cut short may leave it",
				Fix: "Run docker unpause " + n + " (or take a snapshot of it: the take ends the pause)"})
		}
	} else {
		out = append(out, Check{Name: name + " boxes", Detail: "could not list the boxes' containers: " + err.Error()})
	}
	return out
}

func firstOr(s []string, def string) string {
	if len(s) > 0 {
		return s[0]
	}
	return def
}

// reachFix is what to check for the engine to answer, by how it is reached.
func (b *Backend) reachFix() string {
	h := b.where()
	switch {
	case strings.HasPrefix(b.cfg.Host, "ssh://"):
		return "check that `ssh " + strings.TrimPrefix(b.cfg.Host, "ssh://") + " docker version` works with a key (boxsnap never asks for a password), or set BOXSNAP_DOCKER_HOST"
	case strings.HasPrefix(h, "tcp://"):
		return "check that the engine listens with --tlsverify there and that BOXSNAP_DOCKER_TLS_CA, BOXSNAP_DOCKER_TLS_CERT and BOXSNAP_DOCKER_TLS_KEY are its CA and boxsnap's certificate and key"
	}
	return "start the engine (Debian: apt-get install docker.io; systemctl start docker), or set BOXSNAP_DOCKER_HOST to one that runs"
}

// Package demo seeds a newcomer's boxsnap with boxes on the local backend
// (make run): a thread's box running a small web app that serves its screen,
// another thread's box, and one of the owner's machines, each with real
// snapshots; where boot gives it a Docker or a QEMU backend, one box on
// each (docker.go, qemu.go). It calls the core like any client; it must
// never import app/web, app/api or jobs.
package demo

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
	"github.com/boxsnap/boxsnap/providers"
)

// BoxDirer finds a local box's folder.
type BoxDirer interface {
	BoxDir(guest providers.Guest) string
}

// Seed makes the demo once: it does nothing when the backend has a box. self is the
// boxsnap binary, which runs the demo's web app (boxsnap demo-app).
func Seed(ctx context.Context, core *snapshots.Service, taker *take.Take, bx *boxes.Boxes, local BoxDirer, backendID, self string, logger *slog.Logger) error {
	owner := snapshots.Owner()
	existing, err := bx.List(ctx, owner)
	if err != nil {
		return err
	}
	for _, b := range existing {
		if b.BackendID == backendID {
			return nil // seeded before
		}
	}
	signIn, _, err := bx.CreateThread(ctx, owner, "Fix the sign-in flow")
	if err != nil {
		return err
	}
	guide, _, err := bx.CreateThread(ctx, owner, "Write the API guide")
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	type demoBox struct {
		name, thread, command, screen string
		files                         map[string]string
	}
	boxes := []demoBox{
		{name: "amber-fox", thread: signIn.ID,
			command: fmt.Sprintf("exec %q demo-app --port %d", self, port), screen: fmt.Sprintf("http://127.0.0.1:%d/", port),
			files: map[string]string{
				"notes.txt":             "Sign-in flow: move the session check before the redirect.\n",
				"app/main.go":           "package main\n\nfunc main() { println(\"sign-in service\") }\n",
				"db/migrations/041.sql": "ALTER TABLE users ADD COLUMN last_seen timestamptz;\n",
			}},
		{name: "brisk-lake", thread: guide.ID, files: map[string]string{
			"guide/intro.md":     "# The API guide\n\nStart with a token.\n",
			"guide/snapshots.md": "# Snapshots\n\nTake one before a risky change.\n",
		}},
		{name: "work-pc", files: map[string]string{
			"projects/todo.txt": "renew the certificate\nreview the release candidate\n",
		}},
	}
	for _, d := range boxes {
		req := snapshots.BoxRequest{Name: d.name, Backend: backendID, Thread: d.thread, Command: d.command,
			HasScreen: d.screen != "", ScreenURL: d.screen}
		b, err := bx.AcquireBox(ctx, owner, req)
		if err != nil {
			return fmt.Errorf("demo box %s: %w", d.name, err)
		}
		dir := local.BoxDir(providers.Guest{Ref: b.GuestRef})
		for name, body := range d.files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return err
			}
		}
	}
	// Real snapshots, taken as an agent and as the person would.
	takes := []struct {
		c         snapshots.Caller
		box, name string
	}{
		{snapshots.Agent(signIn.ID), "amber-fox", "before the migration"},
		{snapshots.Agent(guide.ID), "brisk-lake", "schema v41"},
		{owner, "work-pc", "release candidate set-up"},
	}
	for _, tk := range takes {
		op, _, err := taker.Take(ctx, tk.c, take.TakeRequest{Box: tk.box, Name: tk.name})
		if err != nil {
			return fmt.Errorf("demo snapshot of %s: %w", tk.box, err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, _ = core.Wait(wctx, op.ID)
		cancel()
	}
	logger.Info("seeded the demo: three boxes on the local backend, two threads, three snapshots")
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("demo: pick a port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

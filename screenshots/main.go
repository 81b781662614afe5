// Command screenshots starts boxsnap on a fresh database with demo data and
// saves PNGs of the states of the specification's "Screenshots" list that
// exist, at 1440, 760 and 390 px, light and dark, into screenshots/out/.
//
//	make browser-deps
//	PLAYWRIGHT_DRIVER_DIR=$PWD/.cache/playwright-driver-1.64.1 go run ./screenshots
//
// With DATABASE_URL set it uses that (empty) database; otherwise the
// embedded default in a temporary folder. -only narrows to states whose
// name contains it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/e2e"
)

// widths are the three of DESIGN.md's "Web" section.
var widths = []int{1440, 760, 390}

func main() {
	out := flag.String("out", "screenshots/out", "folder for the PNGs")
	only := flag.String("only", "", "take only states whose name contains this")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *out, *only); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

// state is one screenshot: where to go and what to do there.
type state struct {
	name string
	path string
	do   func(p playwright.Page) error
}

func run(ctx context.Context, out, only string) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tmp, err := os.MkdirTemp("", "boxsnap-shots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	db, err := boot.OpenDatabase(ctx, config.Config{DatabaseURL: os.Getenv("DATABASE_URL"), DataDir: tmp}, logger, false)
	if err != nil {
		return err
	}
	defer db.Close(context.WithoutCancel(ctx))
	taker := pictures.New(pictures.Options{Logger: logger})
	defer taker.Close()
	if err := taker.Start(); err != nil {
		return err
	}
	s, err := e2e.Start(ctx, db.Pool, e2e.StackOptions{LocalRoot: filepath.Join(tmp, "local"), Logger: logger, Pictures: taker, StopTimeout: 10 * time.Minute})
	if err != nil {
		return err
	}
	defer s.Close(context.WithoutCancel(ctx))
	demo, err := s.Seed(ctx)
	if err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	// A box whose restore waits at its stop, and a take queued behind it:
	// restoring, and a take in progress.
	slow, err := s.SlowBox(ctx, "hazel-heron")
	if err != nil {
		return err
	}
	if _, err := s.Take(ctx, snapshots.Owner(), slow.Name, "before the upgrade", ""); err != nil {
		return err
	}
	if err := s.WriteFile(slow, "data.txt", "changed\n"); err != nil {
		return err
	}
	list, err := s.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: slow.Name})
	if err != nil {
		return err
	}
	slowTarget := list[0].Snapshots[0].ID
	if _, err := s.Core.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: slow.Name, Snapshot: slowTarget}); err != nil {
		return err
	}
	if _, _, err := s.Core.Take(ctx, snapshots.Owner(), snapshots.TakeRequest{Box: slow.Name, Name: "after the upgrade"}); err != nil {
		return err
	}
	// A fork of hazel-heron waits behind its restore: a fork starting.
	forkOp, err := s.Core.Fork(ctx, snapshots.Owner(), snapshots.ForkRequest{Box: slow.Name, Snapshot: slowTarget, Name: "hazel-heron-fork"})
	if err != nil {
		return fmt.Errorf("fork hazel-heron: %w", err)
	}
	// Presence on amber-fox: the restore dialog names what goes.
	if _, err := s.Core.SetPresence(ctx, snapshots.Owner(), "amber-fox", snapshots.Presence{
		Workspaces: []snapshots.Workspace{{Thread: demo.Thread.ID, Working: true}, {Thread: demo.Guide.ID}},
		Desktop:    "you", Terminals: 1}); err != nil {
		return err
	}
	brisk, err := s.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: "brisk-lake"})
	if err != nil {
		return err
	}
	var undo string
	for _, sn := range brisk[0].Snapshots {
		if sn.IsUndo() {
			undo = sn.ID
		}
	}
	mig := demo.Migration.ID
	click := func(sel string) func(p playwright.Page) error {
		return func(p playwright.Page) error { return p.Locator(sel).First().Click() }
	}
	dialog := func(sel string) func(p playwright.Page) error {
		return func(p playwright.Page) error {
			if err := p.Locator(sel).First().Click(); err != nil {
				return err
			}
			return p.Locator("#dialog-host dialog[open]").WaitFor()
		}
	}
	states := []state{
		{name: "snapshots-tab", path: "/boxes/snapshots"},
		{name: "row-actions-on-hover", path: "/boxes/snapshots", do: func(p playwright.Page) error {
			return p.Locator("#snap-" + mig).Hover()
		}},
		{name: "two-selected-and-their-delete", path: "/boxes/snapshots?select=1", do: func(p playwright.Page) error {
			for _, id := range []string{slowTarget, mig} {
				if err := p.Locator("#snap-" + id + " input.pick").Check(); err != nil {
					return err
				}
			}
			if err := p.Locator("button[value=delete]").Click(); err != nil {
				return err
			}
			return p.Locator("dialog").WaitFor()
		}},
		{name: "agents-only", path: "/boxes/snapshots?by=agents"},
		{name: "desktop-box-page", path: "/boxes/amber-fox"},
		{name: "picture-popover", path: "/boxes/amber-fox", do: click("button.pic")},
		{name: "take-snapshot", path: "/boxes/amber-fox", do: dialog("#snapshots-card a.button")},
		{name: "take-in-progress-and-restoring", path: "/boxes/hazel-heron"},
		{name: "restore-dialog-naming-what-goes", path: "/boxes/amber-fox", do: dialog("#snap-" + mig + " a[data-dialog]")},
		{name: "restore-without-undo", path: "/boxes/amber-fox", do: func(p playwright.Page) error {
			if err := dialog("#snap-" + mig + " a[data-dialog]")(p); err != nil {
				return err
			}
			return p.Locator("dialog input[name=undo]").Uncheck()
		}},
		{name: "fork", path: "/boxes/amber-fox", do: func(p playwright.Page) error {
			// Beside Restore on a wide window; in the menu at 390 px.
			if v, _ := p.Locator("#fork-" + mig).IsVisible(); v {
				return dialog("#fork-" + mig)(p)
			}
			if err := p.Locator("#snap-" + mig + " summary").Click(); err != nil {
				return err
			}
			return dialog("#snap-" + mig + " .items a.narrow-only")(p)
		}},
		{name: "a-fork-starting", path: "/boxes/hazel-heron-fork?fork=" + forkOp.ID},
		{name: "notice-with-undo", path: "/boxes/brisk-lake"},
		{name: "undo-dialog", path: "/boxes/brisk-lake", do: dialog(".notice a.button")},
		{name: "row-menu", path: "/boxes/amber-fox", do: click("#snap-" + mig + " summary")},
		{name: "keep-and-its-cost", path: "/boxes/amber-fox/snapshots/" + mig + "/keep"},
		{name: "delete-dialog", path: "/boxes/brisk-lake/snapshots/" + undo + "/delete"},
		{name: "released-box-kept", path: "/boxes/snapshots?kept=1"},
		{name: "box-with-none", path: "/boxes/dusky-dune"},
		{name: "snapshots-settings", path: "/settings/snapshots"},
		{name: "machines-tab", path: "/boxes"},
		{name: "threads-tab", path: "/boxes/threads"},
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	br, err := e2e.Launch()
	if err != nil {
		return err
	}
	defer br.Close()
	n := 0
	for _, dark := range []bool{false, true} {
		scheme := "light"
		if dark {
			scheme = "dark"
		}
		for _, w := range widths {
			bctx, page, err := br.Page(s.URL, w, 900, dark)
			if err != nil {
				return err
			}
			for _, st := range states {
				if only != "" && !strings.Contains(st.name, only) {
					continue
				}
				if _, err := page.Goto(s.URL + st.path); err != nil {
					return fmt.Errorf("%s: %w", st.name, err)
				}
				if st.do != nil {
					if err := st.do(page); err != nil {
						return fmt.Errorf("%s at %d px: %w", st.name, w, err)
					}
				}
				file := filepath.Join(out, fmt.Sprintf("%s-%d-%s.png", st.name, w, scheme))
				if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(file), FullPage: playwright.Bool(true),
					Animations: playwright.ScreenshotAnimationsDisabled}); err != nil {
					return fmt.Errorf("%s: %w", st.name, err)
				}
				n++
			}
			if err := bctx.Close(); err != nil {
				return err
			}
		}
	}
	if n == 0 {
		return errors.New("no state matched -only")
	}
	fmt.Printf("saved %d screenshots in %s\n", n, out)
	return nil
}

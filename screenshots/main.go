// Command screenshots starts boxsnap on a fresh database with demo data and
// saves PNGs of the screenshot states (e2e.Scene.States, the list the layout
// test checks too), at 1440, 760 and 390 px, light and dark, into
// screenshots/out/.
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
	"github.com/boxsnap/boxsnap/e2e"
)

// widths are the three every page is laid out for.
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
	scene, err := s.SetScene(ctx)
	if err != nil {
		return err
	}
	states := scene.States()
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
				if only != "" && !strings.Contains(st.Name, only) {
					continue
				}
				if _, err := page.Goto(s.URL + st.Path); err != nil {
					return fmt.Errorf("%s: %w", st.Name, err)
				}
				if st.Do != nil {
					if err := st.Do(page); err != nil {
						return fmt.Errorf("%s at %d px: %w", st.Name, w, err)
					}
				}
				file := filepath.Join(out, fmt.Sprintf("%s-%d-%s.png", st.Name, w, scheme))
				if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(file), FullPage: playwright.Bool(true),
					Animations: playwright.ScreenshotAnimationsDisabled}); err != nil {
					return fmt.Errorf("%s: %w", st.Name, err)
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

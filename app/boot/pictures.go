package boot

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/pictures"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
)

// usePictureTaker gives the pictures their taker when npm's playwright-core
// is here, and answers it (nil when pictures are off); the caller closes it.
func usePictureTaker(pics *pictures.Pictures, logger *slog.Logger) *pictures.Taker {
	// Pictures need npm's playwright-core (make browser-deps); without it
	// they are off, said once, and never fetched from anywhere.
	driver := os.Getenv("PLAYWRIGHT_DRIVER_DIR")
	if driver == "" {
		driver = filepath.Join(".cache", "playwright-driver-"+pictures.PlaywrightCoreVersion)
	}
	if _, err := os.Stat(filepath.Join(driver, "package", "cli.js")); err != nil {
		logger.Info("pictures of screens are off: no playwright driver here (make browser-deps installs it)", "looked_in", driver)
		return nil
	}
	taker := pictures.New(pictures.Options{Logger: logger, DriverDir: driver})
	pics.Use(taker)
	return taker
}

// warmPictures starts the browser that takes pictures when this process
// works and a box serves its screen (or in the demo).
func warmPictures(ctx context.Context, cfg config.Config, taker *pictures.Taker, bx *boxes.Boxes, logger *slog.Logger) {
	if taker != nil && cfg.Workers && (cfg.Demo || hasScreens(ctx, bx)) {
		// Chromium takes longer to start than a picture may wait (2 s):
		// warm it now, so the first take's picture is not lost. The demo
		// takes its first snapshots at once, so it waits for it.
		warm := func() {
			if err := taker.Start(); err != nil {
				logger.Warn("pictures are off: the browser that takes them did not start", "err", err)
			}
		}
		if cfg.Demo {
			warm()
		} else {
			go warm()
		}
	}
}

// hasScreens reports whether any box serves its screen, so pictures are
// taken.
func hasScreens(ctx context.Context, bx *boxes.Boxes) bool {
	boxes, err := bx.List(ctx, snapshots.Owner())
	if err != nil {
		return false
	}
	for _, b := range boxes {
		if b.HasScreen && b.State != snapshots.BoxReleased {
			return true
		}
	}
	return false
}

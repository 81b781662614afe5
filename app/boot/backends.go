package boot

import (
	"fmt"
	"log/slog"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers/local"
)

// LocalBackendID is the local backend's ID in settings.
const LocalBackendID = "local"

// backends makes the configured backends: the local backend always, in the
// folder the configuration names.
func backends(cfg config.Config, install string, logger *slog.Logger) ([]snapshots.Backend, error) {
	lb, err := local.New(local.Config{ID: LocalBackendID, Root: cfg.LocalRoot, Install: install, Logger: logger.With("backend", LocalBackendID)})
	if err != nil {
		return nil, fmt.Errorf("local backend: %w", err)
	}
	return []snapshots.Backend{{ID: LocalBackendID, Kind: "local", Label: "this host", Snap: lb, Boxes: lb}}, nil
}

package api

import (
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
)

// settingsRoutes are the handlers of boxsnap's settings: the settings
// themselves, the box templates, and a backend forgotten. They hold the
// core (the settings, a backend's boxes) and the boxes seam (templates,
// a backend's forget), nothing else of the server.
type settingsRoutes struct {
	failer
	core  *snapshots.Service
	boxes *boxes.Boxes
}

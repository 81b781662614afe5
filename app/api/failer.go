package api

import "log/slog"

// failer answers a refusal or an internal error (fail) and a dry run's
// plan (answer): every group of handlers holds one, so no group needs the
// server to answer an error.
type failer struct{ logger *slog.Logger }

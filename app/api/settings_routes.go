package api

// settingsRoutes are the handlers of boxsnap's settings: the settings
// themselves, the box templates, and a backend forgotten. They hold the
// server, in a type of their own so the server's type does not grow.
type settingsRoutes struct{ *server }

package web

import (
	"github.com/boxsnap/boxsnap/app/coretest"
	"github.com/boxsnap/boxsnap/views"
)

// optionsOn answers the web app's options with every seam of env and the
// views vw, so that each seam a new one adds reaches every test that
// serves the pages. A test that leaves a seam out on purpose, or passes
// another logger, sets that field on the answer.
func optionsOn(env *coretest.Env, vw *views.Views) Options {
	return Options{Auth: env.Auth, Core: env.Core, Restores: env.Restores, Take: env.Take, Keeps: env.Keeps, Tab: env.Tab, Boxes: env.Boxes, Forks: env.Forks, Contents: env.Contents, Approvals: env.Approvals, Pictures: env.Pictures, Heads: env.Heads, BoxViews: env.BoxViews, Hosts: env.Hosts, Views: vw, Logger: env.Logger}
}

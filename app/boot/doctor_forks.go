package boot

import (
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/doctor"
	"github.com/boxsnap/boxsnap/providers/local"
)

// localForksResult says whether forks of a local snapshot share its files
// here (each fork's box an overlay over one read-only tree of them, so N
// forks cost about one copy) or each copies them, why, and the fix.
func localForksResult(cfg config.Config) doctor.Result {
	if !cfg.LocalDiskImages {
		return doctor.Result{Name: "local forks", OK: true, Detail: "each fork copies its snapshot's files, because BOXSNAP_LOCAL_DISK_IMAGES=false and a fork's own changes are kept in a file system of its own; unset it for forks that share one copy"}
	}
	if why, fix := local.ProbeShare(cfg.LocalRoot); why != "" {
		return doctor.Result{Name: "local forks", Detail: "each fork copies its snapshot's files, because " + why, Fix: fix}
	}
	return doctor.Result{Name: "local forks", OK: true, Detail: "forks of one snapshot share one read-only copy of its files (each fork an overlay over it), so N forks cost about one copy"}
}

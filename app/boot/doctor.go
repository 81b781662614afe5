package boot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/doctor"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers/local"
	"github.com/boxsnap/boxsnap/providers/proxmox"
)

// Doctor checks the database, the migrations and each configured backend,
// prints each result, and reports whether all passed.
func Doctor(ctx context.Context, cfg config.Config, logger *slog.Logger, w io.Writer) bool {
	var database *Database
	databaseCheck := func(ctx context.Context) []doctor.Result {
		where := "the embedded database in " + cfg.DataDir
		if cfg.DatabaseURL != "" {
			where = "the database at " + config.Redact(cfg.DatabaseURL)
		}
		d, err := OpenDatabase(ctx, cfg, logger, true)
		if err != nil {
			r := doctor.Result{Name: "database", Detail: where + ": " + err.Error()}
			if p, ok := err.(*Problem); ok {
				r.Detail, r.Fix = p.What, p.Fix
			}
			return []doctor.Result{r}
		}
		database = d
		version, err := db.New().DoctorServerVersion(ctx, d.Pool)
		if err != nil {
			return []doctor.Result{{Name: "database", Detail: where + " answers, but not what version it is: " + err.Error()}}
		}
		return []doctor.Result{{Name: "database", OK: true, Detail: fmt.Sprintf("%s answers (PostgreSQL %s)", where, version)}}
	}
	migrationsCheck := func(ctx context.Context) []doctor.Result {
		if database == nil {
			return []doctor.Result{{Name: "migrations", Detail: "not checked: no database", Fix: "fix the database first"}}
		}
		st, err := store.Status(ctx, database.Pool)
		if err != nil {
			return []doctor.Result{{Name: "migrations", Detail: err.Error(), Fix: "run boxsnap migrate"}}
		}
		if st.AppPending > 0 || st.RiverPending > 0 {
			return []doctor.Result{{Name: "migrations", Detail: fmt.Sprintf("%d of the app's and %d of River's are not applied", st.AppPending, st.RiverPending),
				Fix: "run boxsnap migrate (serve and work apply them at start too)"}}
		}
		return []doctor.Result{{Name: "migrations", OK: true, Detail: fmt.Sprintf("%d applied, none pending", st.AppApplied)}}
	}
	hostsCheck := func(ctx context.Context) []doctor.Result {
		if database == nil {
			return nil
		}
		return []doctor.Result{workersResult(ctx, database)}
	}
	localCheck := func(ctx context.Context) []doctor.Result {
		if err := local.MakeFolder(cfg.LocalRoot); err != nil {
			return []doctor.Result{{Name: "backend local", Detail: fmt.Sprintf("%s cannot be made: %s", cfg.LocalRoot, shortErr(err)),
				Fix: "choose a folder you can write with --local-root or BOXSNAP_LOCAL_ROOT"}}
		}
		if err := checkWritable(cfg.LocalRoot); err != nil {
			return []doctor.Result{{Name: "backend local", Detail: err.Error(), Fix: "choose a folder you can write with --local-root or BOXSNAP_LOCAL_ROOT"}}
		}
		out := []doctor.Result{{Name: "backend local", OK: true, Detail: "boxes and snapshots in " + cfg.LocalRoot}}
		// How a new box's disk is bounded: by a file system of its own
		// (exact, the default), with the fix where that cannot be made
		// here, or by the watch when images are turned off.
		if !cfg.LocalDiskImages {
			out = append(out, doctor.Result{Name: "local box disks", OK: true, Detail: "a new box's disk is bounded by a watch that measures its folder, not to the byte, because BOXSNAP_LOCAL_DISK_IMAGES=false; unset it to bound it to the byte by a file system of its own"})
		} else if why, fix := local.ProbeLoop(filepath.Join(cfg.LocalRoot, "disks")); why != "" {
			out = append(out, doctor.Result{Name: "local box disks", Detail: "a new box's disk is bounded by a watch that measures its folder, not to the byte, because " + why, Fix: fix})
		} else {
			out = append(out, doctor.Result{Name: "local box disks", OK: true, Detail: "a new box's disk is bounded to the byte by a file system of its own (a loop-mounted ext4 image; a 16 GiB one takes about 170 MiB on the host at once, more as the box fills)"})
		}
		return append(out, localForksResult(cfg))
	}
	proxmoxCheck := func(ctx context.Context) []doctor.Result {
		if cfg.ProxmoxURL == "" {
			return nil
		}
		install := installID(ctx, database, logger)
		be, err := proxmoxBackend(cfg, install, logger)
		if err != nil {
			return []doctor.Result{{Name: "backend " + cfg.ProxmoxID, Detail: err.Error(), Fix: "set BOXSNAP_PROXMOX_URL, BOXSNAP_PROXMOX_TOKEN_ID and BOXSNAP_PROXMOX_TOKEN_SECRET(_FILE)"}}
		}
		return proxmoxResults(ctx, be)
	}
	dockerCheck := func(ctx context.Context) []doctor.Result {
		if cfg.DockerHost == "" {
			return nil
		}
		install := installID(ctx, database, logger)
		be, err := dockerBackend(cfg, install, logger)
		if err != nil {
			return []doctor.Result{{Name: "backend " + cfg.DockerID, Detail: err.Error(), Fix: "set BOXSNAP_DOCKER_HOST (unix://, tcp:// with the three BOXSNAP_DOCKER_TLS_ files, or ssh://user@host)"}}
		}
		defer func() { _ = be.Close() }()
		var out []doctor.Result
		for _, c := range be.Doctor(ctx) {
			out = append(out, doctor.Result{Name: c.Name, OK: c.OK, Detail: c.Detail, Fix: c.Fix})
		}
		return out
	}
	qemuCheck := func(ctx context.Context) []doctor.Result {
		return qemuResults(ctx, cfg, installID(ctx, database, logger), logger)
	}
	ok := doctor.Run(ctx, w, databaseCheck, migrationsCheck, hostsCheck, localCheck, contentStoreCheck(cfg), packIndexCheck(cfg, &database), proxmoxCheck, dockerCheck, qemuCheck)
	if database != nil {
		database.Close(context.WithoutCancel(ctx))
	}
	return ok
}

// installID is the install's ID the backends' checks label with: the one
// serve made, or "doctor" before the first start or without a database.
func installID(ctx context.Context, database *Database, logger *slog.Logger) string {
	if database == nil {
		return "doctor"
	}
	id, err := db.New().DoctorInstallID(ctx, database.Pool)
	if err != nil {
		if !errors.Is(err, pgx.ErrNoRows) {
			logger.Warn("the doctor could not read the install's ID; its checks label as doctor", "err", err)
		}
		return "doctor"
	}
	return id
}

// proxmoxResults runs a Proxmox backend's own checks: the token's rights,
// each storage and what it restores, and every locked guest with the host's
// command. The token's secret is in none of them.
func proxmoxResults(ctx context.Context, be *proxmox.Backend) []doctor.Result {
	var out []doctor.Result
	for _, c := range be.Doctor(ctx) {
		out = append(out, doctor.Result{Name: c.Name, OK: c.OK, Detail: c.Detail, Fix: c.Fix})
	}
	return out
}

package dbtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/boxsnap/boxsnap/app/pgcluster"
)

// seedName is a stopped, freshly made cluster in os.TempDir(), shared by
// the test binaries of this machine's user: copying it starts a test
// cluster in about a third of initdb's time. Its name must not start with
// folderPrefix, which sweep removes.
const seedName = "boxsnap-pgseed"

// ensureSeed answers the seed's cluster folder, making the seed if it is
// missing. A seed that is not this user's own folder of mode 0700 is not
// used: a cluster planted by someone else could run their code.
func ensureSeed(ctx context.Context) (string, error) {
	root := filepath.Join(os.TempDir(), seedName)
	data := filepath.Join(root, "postgres")
	if fi, err := os.Lstat(root); err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm() != 0o700 {
			return "", fmt.Errorf("seed %s is not this user's folder of mode 0700: remove it", root)
		}
		if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err == nil {
			return data, nil
		}
		return "", fmt.Errorf("seed %s holds no cluster: remove it", root)
	}
	tmp, err := os.MkdirTemp("", seedName+"-tmp-")
	if err != nil {
		return "", fmt.Errorf("make the seed cluster: %w", err)
	}
	defer os.RemoveAll(tmp) // empty once renamed
	if err := os.Chmod(tmp, 0o711); err != nil {
		return "", fmt.Errorf("make the seed cluster: %w", err)
	}
	c, err := pgcluster.Start(ctx, pgcluster.Options{DataDir: filepath.Join(tmp, "postgres"), ForTests: true})
	if err != nil {
		return "", fmt.Errorf("make the seed cluster: %w", err)
	}
	if err := c.Stop(ctx); err != nil {
		return "", fmt.Errorf("make the seed cluster: %w", err)
	}
	_ = os.Remove(filepath.Join(tmp, "postgres.lock"))
	_ = os.Remove(filepath.Join(tmp, "postgres", "postgresql.log"))
	if err := os.Chmod(tmp, 0o700); err != nil {
		return "", fmt.Errorf("make the seed cluster: %w", err)
	}
	// Another test binary may have made the seed meanwhile: either copy
	// is complete, so losing the race is fine.
	if err := os.Rename(tmp, root); err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, syscall.ENOTEMPTY) {
		return "", fmt.Errorf("keep the seed cluster: %w", err)
	}
	return data, nil
}

// copyTree copies a stopped cluster's folder: folders, files and symbolic
// links, with their modes and, when run as root, their owners.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(target, fi.Mode().Perm()); err != nil {
				return fmt.Errorf("copy the seed cluster: %w", err)
			}
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return fmt.Errorf("copy the seed cluster: %w", err)
			}
		case d.Type().IsRegular():
			if err := copyFile(p, target, fi.Mode().Perm()); err != nil {
				return fmt.Errorf("copy the seed cluster: %w", err)
			}
		default:
			return nil // sockets and the like have no place in a stopped cluster
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
			return os.Lchown(target, int(st.Uid), int(st.Gid))
		}
		return nil
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

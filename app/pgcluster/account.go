package pgcluster

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// rootUserName is the OS user the cluster runs as when boxsnap runs as root:
// initdb, pg_ctl and postgres all refuse root.
const rootUserName = "postgres"

// account is the OS user the cluster's programs run as.
type account struct {
	name     string
	uid, gid int
	// switchTo is true when boxsnap is root and the programs must run as
	// this other user.
	switchTo bool
}

// clusterAccount answers the current user, or the OS user postgres when the
// current user is root.
func clusterAccount() (account, error) {
	if os.Geteuid() != 0 {
		name := strconv.Itoa(os.Geteuid())
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return account{name: name, uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	u, err := user.Lookup(rootUserName)
	if err != nil {
		return account{}, fmt.Errorf("boxsnap runs as root, which PostgreSQL refuses, and there is no OS user %s to run it as: "+
			"create one (useradd --system %s; apt-get install postgresql-15 does), or run boxsnap as another user", rootUserName, rootUserName)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return account{}, fmt.Errorf("OS user %s has a uid that is not a number (%q)", rootUserName, u.Uid)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return account{}, fmt.Errorf("OS user %s has a gid that is not a number (%q)", rootUserName, u.Gid)
	}
	return account{name: rootUserName, uid: uid, gid: gid, switchTo: true}, nil
}

// sysProcAttr runs a program as the account.
func (a account) sysProcAttr() *syscall.SysProcAttr {
	if !a.switchTo {
		return nil
	}
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.gid)}}
}

// canSearch says whether the account may pass through a folder with this
// owner and mode (supplementary groups are not considered).
func (a account) canSearch(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	switch {
	case int(st.Uid) == a.uid:
		return fi.Mode()&0o100 != 0
	case int(st.Gid) == a.gid:
		return fi.Mode()&0o010 != 0
	default:
		return fi.Mode()&0o001 != 0
	}
}

// makeReachable lets the account pass through every folder from / down to
// dir. A root-run boxsnap whose data folder is under /root (mode 0700) would
// otherwise start a server that cannot reach its own data. Only the search
// bit for others is added (o+x: others may pass through by a known name, not
// list or change anything), and each folder changed is logged.
func (a account) makeReachable(dir string, logger *slog.Logger) error {
	if !a.switchTo {
		return nil
	}
	var chain []string
	for d := dir; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		d := chain[i]
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("check that OS user %s can reach %s: %w", a.name, dir, err)
		}
		if a.canSearch(fi) {
			continue
		}
		mode := fi.Mode().Perm() | 0o001
		if err := os.Chmod(d, mode); err != nil {
			return fmt.Errorf("OS user %s cannot reach %s and adding the search bit failed: %w: run chmod o+x %s, or choose a data folder it can reach", a.name, dir, err, d)
		}
		logger.Warn("added the search bit for others (o+x) to a folder, so that the PostgreSQL user can reach its data folder",
			"folder", d, "mode", fmt.Sprintf("%#o", mode), "user", a.name)
	}
	return nil
}

// own gives path to the account with the given mode. An existing tree owned
// by someone else (a cluster first run by another user) is given to the
// account file by file, since postgres refuses a data folder it does not own.
func (a account) own(path string, mode fs.FileMode, recursive bool) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && a.switchTo && (int(st.Uid) != a.uid || int(st.Gid) != a.gid) {
		if recursive {
			err = filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(p, a.uid, a.gid)
			})
		} else {
			err = os.Lchown(path, a.uid, a.gid)
		}
		if err != nil {
			return fmt.Errorf("give %s to OS user %s: %w", path, a.name, err)
		}
	} else if ok && !a.switchTo && int(st.Uid) != a.uid {
		return fmt.Errorf("%s belongs to uid %d, not to the user running boxsnap (uid %d): chown -R %d %s, or run boxsnap as its owner",
			path, st.Uid, a.uid, a.uid, path)
	}
	if fi.Mode().Perm() != mode {
		if err := os.Chmod(path, mode); err != nil {
			return fmt.Errorf("set mode %#o on %s: %w", mode, path, err)
		}
	}
	return nil
}

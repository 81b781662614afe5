package local

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// pathCalls are the calls that reach a file by its path: os's, unix's and
// syscall's, and the walks and globs of path/filepath. The *at calls of
// unix are path-based only with AT_FDCWD as their folder.
var pathCalls = map[string]map[string]bool{
	"os": set("Open", "OpenFile", "Create", "Lstat", "Stat", "ReadFile", "WriteFile", "ReadDir", "Readlink",
		"Symlink", "Link", "Mkdir", "MkdirAll", "MkdirTemp", "CreateTemp", "Remove", "RemoveAll", "Rename",
		"Chmod", "Chown", "Lchown", "Chtimes", "Truncate", "OpenRoot", "OpenInRoot", "DirFS", "Chdir"),
	"unix": set("Open", "Creat", "Lstat", "Stat", "Mkfifo", "Mknod", "Mkdir", "Rmdir", "Unlink", "Rename",
		"Chmod", "Chown", "Lchown", "Link", "Symlink", "Readlink", "Access", "Truncate", "Utimes", "UtimesNano",
		"Lutimes", "Statfs", "Getxattr", "Lgetxattr", "Setxattr", "Lsetxattr", "Listxattr", "Llistxattr",
		"Removexattr", "Lremovexattr", "Chdir", "Chroot", "InotifyAddWatch"),
	"filepath": set("Walk", "WalkDir", "Glob", "EvalSymlinks"),
}

// atCalls are unix's calls that take a folder's descriptor first.
var atCalls = set("Openat", "Openat2", "Fstatat", "Mkdirat", "Mkfifoat", "Mknodat", "Unlinkat", "Renameat",
	"Renameat2", "Linkat", "Symlinkat", "Readlinkat", "Fchownat", "Fchmodat", "UtimesNanoAt", "Faccessat")

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// pathCallsAllowed are the functions that reach files by their paths, each
// with why no box file is reached so: boxsnap's own store (content/,
// snapshots/, state/, tmp/ and its lock), the host's /proc and cgroups, a
// box's whole folder by boxsnap's own path to it (never a path inside it),
// and the descriptors' /proc links, which name the very file opened.
var pathCallsAllowed = map[string]string{
	"process/network.go StartPasta":                "the host's /proc: the sandbox process's wait channel, namespaces and routes",
	"process/network.go commandBelow":              "the host's /proc: the sandbox's processes and their names",
	"state/proc.go ProcStart":                      "the host's /proc",
	"owners/owners.go (*Owners).EndRecorded":       "the box's freezer cgroup, the host's",
	"state/proc.go (*ProcRecord).Forget":           "a dead start's freezer cgroup, the host's",
	"owner.go (*Backend).TakeOver":                 "the store's state folder",
	"exports/scrub.go (*Exports).valuesOf":         "the store's content",
	"exports/scrub.go (*Exports).scanContent":      "the store's content",
	"capture/rates.go (*Capturer).readRatesLocked": "the store's rates file",
	"new.go New":                                      "makes the store's own folders",
	"cachebound.go cacheBound":                        "the store's content folder, for its file system's size",
	"confined/beneath.go (*Beneath).Chmod":            "a descriptor's /proc link, the file found beneath the box's folder",
	"confined/beneath.go (*Beneath).Lutimes":          "a descriptor's /proc link, the box's folder itself",
	"confined/beneath.go (*Beneath).RemoveAll":        "a descriptor's /proc link, the folder found beneath the box's",
	"confined/beneath.go OpenTree":                    "the box's folder itself, by boxsnap's path to it: the one open beneath which all else is",
	"boxes.go (*Backend).Acquire":                     "makes or removes the box's folder itself, by boxsnap's path to it",
	"boxes.go (*Backend).Release":                     "removes the box's whole folder and its state files in the store",
	"boxes.go (*Backend).RestartRunning":              "the store's state folder",
	"state/held.go (*States).HeldBoxes":               "the store's state and boxes folders, listed",
	"boxes.go (*Backend).existingBox":                 "the box's folder itself, by boxsnap's path to it",
	"state/state.go (*States).ReadState":              "the store's state file",
	"state/found.go (*States).FoundMarked":            "the store's state folder: a box's found mark",
	"boxes.go (*Backend).startLocked":                 "the box's freezer cgroup",
	"boxes.go (*Backend).boxCommand":                  "the box's log in the store's state folder",
	"boxes.go (*Backend).stop":                        "the store's state file",
	"apply/template.go (*Writer).TemplateDir":         "the templates folder, boxsnap's own setting, and a template's name in it",
	"process/stopped.go GroupStopped":                 "the host's /proc",
	"store/codec.go (*Store).cachedManifest":          "the store's manifest file",
	"store/codec.go (*Store).Remember":                "the store's manifest file",
	"store/codec.go (*Store).WholeSnapshot":           "the store's snapshot folder",
	"store/unshipped.go (*Store).Unshipped":           "the store's snapshot folders",
	"store/unshipped.go (*Store).HasFile":             "a file of the store's snapshot folder",
	"content/copy.go (*Copier).HashPath":              "a file of the store",
	"sweep/delete.go (*Deletes).DeleteSnapshot":       "the store's snapshot folder",
	"sweep/delete.go markDeleting":                    "the store's snapshot folder",
	"sweep/delete.go (*Deletes).referenced":           "the store's snapshot folders",
	"sweep/delete.go (*Deletes).sweepLocked":          "the store's content, snapshot and tmp folders",
	"sweep/lowers.go (*Deletes).sweepLowers":          "the store's state folder",
	"overlay/lowers.go (*Lowers).Ensure":              "the store's shared trees, written by boxsnap from the store",
	"overlay/lowers.go (*Lowers).Named":               "the store's shared trees' folder",
	"overlay/lowers.go (*Lowers).Sweep":               "the store's shared trees' folder",
	"overlay/lowers.go sizeOf":                        "a shared tree of the store's, read through no link",
	"overlay/links.go (*Links).linkOne":               "the store's content object, linked by its open file into a folder of a shared tree opened beneath",
	"overlay/links.go setDetails":                     "the store's content object, re-timed by its open file's /proc name",
	"overlay/links.go (*Links).objectFits":            "the store's content object",
	"overlay/links.go sameFileSystem":                 "the store's shared tree and content folders",
	"overlay/probe.go Probe":                          "a probe's own image and tree in the store's folders",
	"overlay/probe.go Known":                          "the host's /proc",
	"overlay/probe.go moduleLoadable":                 "the host's /proc and kernel modules",
	"exports/export.go (*Exports).ExportSnapshot":     "the store's manifest file",
	"exports/export.go (*Exports).ImportSnapshots":    "the store's tmp folder",
	"exports/export.go (*Exports).unpackBatch":        "the store's tmp folder",
	"exports/export.go (*Exports).readGroup":          "the store's group file",
	"exports/export.go (*Exports).checkBatch":         "the store's snapshot folders",
	"exports/export.go (*Exports).checkBatchContent":  "the store's tmp folder and content",
	"exports/export.go (*Exports).publishBatch":       "the store's tmp and content folders",
	"exports/export.go (*Exports).exportContent":      "the store's content",
	"exports/export.go (*Exports).publishImported":    "the store's tmp and snapshot folders",
	"exports/export.go (*Exports).stageContent":       "the store's tmp folder and content",
	"disks/fork.go (*Disks).ForkFolder":               "the new box's folder itself, made by boxsnap's path to it",
	"disks/forkleft.go (*Disks).sweepNamed":           "a killed fork's folder, image and mount folder, found by their names in the store's boxes and disks folders",
	"disks/forkleft.go allocated":                     "a killed fork's image in the store's disks folder",
	"fork.go forkSnapshot":                            "the new box's folder itself, made and renamed by boxsnap's path to it",
	"held/held.go (*Held).HeldSnapshots":              "the store's snapshot folders",
	"held/held.go (*Held).readHeld":                   "the store's snapshot folder",
	"held/held.go (*Held).contentMissing":             "the store's content",
	"journal/journal.go (*journal).watchLinkedLocked": "a descriptor's /proc link, the file found beneath the box's folder",
	"journal/journal.go (*journal).watchTreeLocked":   "a descriptor's /proc link, the folder found beneath the box's",
	"journal/journal.go newResolver":                  "the box's folder itself, by boxsnap's path to it: the one open beneath which all else is",
	"disks/image.go (*Disks).MountImages":             "the store's disks folder and state files",
	"disks/image.go (*Disks).EnsureMounted":           "the box's folder itself as a mount point, and the store's image",
	"disks/full.go (*Disks).FullStatus":               "the store's image",
	"disks/image.go (*Disks).HasImage":                "the store's image",
	"store/lockfile.go LockFile":                      "the store's lock files: a box's, the disks', the shared trees'",
	"disks/unmount_idle.go UnmountIdle":               "the store's disks folder and an image's own mount folder",
	"disks/image.go (*Disks).MakeBoxFolder":           "the new box's folder itself and its image",
	"disks/image.go (*Disks).MoveImage":               "the new box's folder itself and its image, renamed by boxsnap's path to them",
	"disks/image.go (*Disks).RemoveBoxFolder":         "the released box's folder itself and its image",
	"boxes.go (*Backend).watchProcess":                "the store's image",
	"disks/image.go ProbeLoop":                        "a trial image and mount point in the store's disks folder",
	"disks/image.go UnmountAll":                       "the host's mount table and the data folder's mount points",
	"disks/image.go RoomOf":                           "the box's folder itself, as a file system",
	"apply/restore.go emptyFolder":                    "the new box's folder itself",
	"capture/take.go (*Capturer).Storage":             "the store's file system",
	"process/process.go (*Processes).EndFreezer":      "the host's freezer cgroup",
	"process/process.go (*Processes).StartIn":         "the host's freezer cgroup",
	"process/process.go MakeFolder":                   "the data folder and those above it, boxsnap's own setting",
	"process/process.go Passable":                     "the data folder and those above it, boxsnap's own setting",
	"process/process.go CgroupProcs":                  "the host's freezer cgroup",
	"process/process.go Freeze":                       "the host's freezer cgroup",
	"process/process.go GroupMembers":                 "the host's /proc",
	"process/process.go (*Processes).NewFreezer":      "the host's cgroups",
	"process/process.go CgroupsAt":                    "the host's cgroups",
	"owners/owners.go (*Owners).CleanCgroups":         "the host's cgroups",
	"owners/owners.go (*Owners).removeLeftCgroup":     "the host's cgroups and the store's state file",
	"process/process.go IsV2":                         "the host's cgroups",
	"process/process.go (*Processes).BoxCgroups":      "the host's /proc",
	"process/process.go othersMayRun":                 "boxsnap's own executable and the folders above it",
	"process/process.go Thaw":                         "the host's freezer cgroup",
	"process/process.go threadFreezer":                "the host's /proc",
	"reset.go (resets).swapIn":                        "a reset's fresh folder itself, by boxsnap's path to it",
	"reset.go (resets).commitReset":                   "the box's folder itself and its image, swapped with a reset's fresh ones by boxsnap's path to them",
	"reset.go (resets).readyFolder":                   "the box's folder itself, moved aside and made again by boxsnap's path to it",
	"reset.go (resets).removeResetLeftLocked":         "a reset's fresh and old folders and images, by boxsnap's path to them",
	"reset.go exchange":                               "the box's folder itself and a reset's fresh one, swapped by boxsnap's path to them",
	"resetleft.go (resets).endReset":                  "the store's stat cache and a reset's record",
	"resetleft.go (resets).finishReset":               "a reset's record in the store's state folder",
	"resetleft.go (resets).finishResets":              "the store's state folder",
	"resetleft.go (resets).finishResetLocked":         "a reset's record, the box's folder itself and its image, and a reset's fresh and old ones, by boxsnap's path to them",
	"resetleft.go inodeOf":                            "the box's folder itself or its image, or a reset's fresh one, by boxsnap's path to it",
	"resetleft.go renameExchange":                     "the box's folder itself and a reset's fresh one, by boxsnap's path to them",
	"apply/restore.go (*Writer).CopyTree":             "makes the new box's folder itself, by boxsnap's path to it",
	"store/usable.go (*Store).LoadUsable":             "the store's snapshot folder",
	"apply/restore.go (*Writer).openContent":          "the store's content",
	"apply/restore.go (*Writer).checkContent":         "the store's content",
	"apply/staged.go (*Writer).newStaging":            "the store's tmp folder, and a staging folder made in it",
	"apply/staged.go (*staging).close":                "a staging folder in the store's tmp folder",
	"store/opencontent.go (*Store).OpenContent":       "the store's content",
	"store/store.go (*Store).LockStore":               "the store's lock file",
	"store/store.go ReadChecked":                      "a file of the store",
	"store/store.go ReplaceFile":                      "a file of the store",
	"store/store.go SyncDir":                          "a folder or file of the store, or a box's state file",
	"store/store.go SyncFS":                           "opens the store's root or a box's folder itself, by boxsnap's path to it, for one syncfs of its file system",
	"store/store.go WriteFileAtomic":                  "a file of the store",
	"capture/label.go (*Capturer).TakeID":             "the store's snapshot folder",
	"capture/label.go (*Capturer).NameManifest":       "the store's snapshot folder of its parent",
	"capture/take.go (*Capturer).openHeld":            "the store's content folder",
	"capture/take.go (*Capturer).copyOnce":            "the store's content",
	"capture/take.go (*Capturer).newContentFile":      "the store's tmp folder",
	"capture/take.go (*Capturer).Capture":             "a folder for the take's new content, made in the store's tmp folder",
	"store/spread.go SpreadFolders":                   "a folder of the store (its tmp, the shared trees'), by boxsnap's path to it",
	"capture/take.go (*Capturer).Publish":             "the store's tmp and snapshot folders",
}

// confinedPackages are the folders of the local backend's packages whose
// every path-based call TestNoPathBasedBoxFileCalls checks: this package and
// its parts (diskimage reaches only its own image files, never a box's).
var confinedPackages = []string{".", "apply", "browse", "capture", "confined", "content", "disks", "exports", "held", "journal", "owners", "process", "overlay", "state", "store", "sweep"}

// TestNoPathBasedBoxFileCalls: no box file is reached through a path (a
// filepath.Join(dir, rel) and a path-based call): every path-based call of
// the local backend is in a function pathCallsAllowed names with its
// reason, none of which is a file inside a box; every other file of a box
// is reached through beneath. A call added elsewhere fails this test, and
// so does an allowed function that no longer makes one.
func TestNoPathBasedBoxFileCalls(t *testing.T) {
	var files []string
	for _, dir := range confinedPackages {
		found, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
	}
	fset := token.NewFileSet()
	used := map[string]bool{}
	var bad []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			key := name + " " + funcName(fn)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				p := pkg.Name
				if p == "syscall" {
					p = "unix"
				}
				byPath := pathCalls[p][sel.Sel.Name]
				if p == "unix" && atCalls[sel.Sel.Name] && len(call.Args) > 0 {
					if a, ok := call.Args[0].(*ast.SelectorExpr); ok && a.Sel.Name == "AT_FDCWD" {
						byPath = true
					}
				}
				if !byPath {
					return true
				}
				if _, ok := pathCallsAllowed[key]; ok {
					used[key] = true
					return true
				}
				bad = append(bad, fset.Position(call.Pos()).String()+": "+pkg.Name+"."+sel.Sel.Name+" in "+funcName(fn))
				return true
			})
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("a path-based call outside the store: %s; reach a box's file through beneath", b)
	}
	for key := range pathCallsAllowed {
		if !used[key] {
			t.Errorf("%s is allowed path-based calls but makes none: take it off the list", key)
		}
	}
}

// funcName is a function's name with its receiver's type: "(*Backend).Open".
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	var recv string
	switch x := fn.Recv.List[0].Type.(type) {
	case *ast.StarExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			recv = "(*" + id.Name + ")"
		}
	case *ast.Ident:
		recv = "(" + x.Name + ")"
	}
	return recv + "." + fn.Name.Name
}

package docker

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/moby/moby/client"
)

// The engine's stat of a path of a container's layer has its modification
// time and no change time, and a write that sets the modification time
// back (tar and cp -p do, and the archive endpoint's writes) and keeps the
// size reads as no change. On a local engine that keeps the layer in an
// overlay2 folder this process can read, the change time of each changed
// path is read there (it moves on every write and cannot be set back).
// Only a time is read, never a file's content.

// upperDir answers the folder of the container's writable layer on this
// host, or "" where there is none to read; it is asked of the engine once
// a container.
func (b incremental) upperDir(ctx context.Context, id string) string {
	if !b.local() {
		return ""
	}
	r := &b.records
	r.mu.Lock()
	u, ok := r.upper[id]
	r.mu.Unlock()
	if ok {
		return u
	}
	cctx, cancel := short(ctx)
	res, err := b.c.ContainerInspect(cctx, id, client.ContainerInspectOptions{})
	cancel()
	if err != nil || res.Container.ID != id {
		return ""
	}
	if c := res.Container; c.GraphDriver != nil && c.GraphDriver.Name == "overlay2" {
		u = c.GraphDriver.Data["UpperDir"]
	}
	if st, err := os.Stat(u); u == "" || !filepath.IsAbs(u) || err != nil || !st.IsDir() {
		u = ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.upper == nil {
		r.upper = map[string]string{}
	}
	r.upper[id] = u
	return u
}

// changeTime reads a path's change time in the layer's folder; zero where
// it cannot.
func changeTime(upper, p string) time.Time {
	if upper == "" {
		return time.Time{}
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(upper, filepath.Clean("/"+p)), &st); err != nil {
		return time.Time{}
	}
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
}

package boxfiles

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/boxsnap/boxsnap/providers"
)

// Files boxsnap writes into a box's container go through the engine's
// archive endpoint (PUT /containers/{id}/archive): a tar stream made here,
// unpacked by the engine beneath the container's root, which it never
// leaves. Nothing of the box's runs for it (no `docker exec`). A
// container's files are hostile: each folder on the way is checked first
// (one stat each) to be a folder and not a link, the engine replaces a link
// or a file where the stream puts a folder (it never follows it), and what
// the stream writes is given to the box's user.

// markerDir, AccessFile and IdentityFile are where boxsnap's files live in
// a Docker box, beneath its container's root, as in a local box's folder.
const (
	markerDir    = ".boxsnap"
	AccessFile   = ".boxsnap/env"      // the box's access file
	IdentityFile = ".boxsnap/identity" // the identity marker
)

// maxUserDBBytes bounds the /etc/passwd or /etc/group read to find the
// box's user.
const maxUserDBBytes = 1 << 20

// owner is who the files boxsnap writes into a box belong to.
type owner struct{ uid, gid int }

// putEntry is one entry of a stream written into a container: a folder
// when data is nil and dir is set, else a file.
type putEntry struct {
	rel  string
	dir  bool
	data []byte
	mode fs.FileMode
}

// putEntries writes entries beneath the container's root, in order (a
// folder before what it holds), owned by o. A link or a file where an
// entry puts a folder is replaced by the folder.
func (f *Files) putEntries(ctx context.Context, name string, o owner, entries []putEntry) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	for _, e := range entries {
		h := &tar.Header{Name: e.rel, Mode: int64(e.mode.Perm()), Uid: o.uid, Gid: o.gid, ModTime: now, Typeflag: tar.TypeReg, Size: int64(len(e.data))}
		if e.dir {
			h.Name, h.Typeflag, h.Size = e.rel+"/", tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("write %s: %w", e.rel, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("write %s: %w", e.rel, err)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	cctx, cancel := short(ctx)
	defer cancel()
	_, err := f.E.Client().CopyToContainer(cctx, name, client.CopyToContainerOptions{DestinationPath: "/", Content: &buf, AllowOverwriteDirWithFile: true})
	return f.E.Wrap(err, "write into the container "+name)
}

// missingFolders checks each folder on the way to rel in the container
// (not rel itself) and answers those that are missing, top first: one that
// is a link is refused, one that is a file fails.
func (f *Files) missingFolders(ctx context.Context, name, rel string) ([]string, error) {
	var missing []string
	s := side{id: name}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		if len(missing) > 0 {
			missing = append(missing, dir)
			continue
		}
		st, err := f.stat(ctx, s, dir)
		switch {
		case errors.Is(err, providers.ErrNotFound):
			missing = append(missing, dir)
			continue
		case err != nil:
			return nil, err
		}
		switch kindOf(st.Mode) {
		case "dir":
		case "link":
			return nil, &providers.RefusedError{Why: fmt.Sprintf("%s goes through a link in the box (%s), which is never followed", rel, dir)}
		default:
			return nil, fmt.Errorf("write %s: %s in the box is not a folder", rel, dir)
		}
	}
	return missing, nil
}

// WriteInto writes data to rel (a clean path relative to the
// container's root) in the container name, whose inspection is c, with
// mode, its missing folders made 0700, all given to the box's user.
func (f *Files) WriteInto(ctx context.Context, c container.InspectResponse, name, rel string, data []byte, mode fs.FileMode) error {
	clean := path.Clean(strings.TrimPrefix(rel, "/"))
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || clean != rel {
		return &providers.RefusedError{Why: fmt.Sprintf("%q is not a path inside the box", rel)}
	}
	o, err := f.boxOwner(ctx, c, name)
	if err != nil {
		return err
	}
	missing, err := f.missingFolders(ctx, name, rel)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		// The engine would remove a folder where the stream puts a file,
		// with all it holds: a login is never written over a folder.
		if st, err := f.stat(ctx, side{id: name}, rel); err == nil && st.Mode.IsDir() {
			return fmt.Errorf("write %s: it is a folder in the box", rel)
		}
	}
	var entries []putEntry
	for _, d := range missing {
		entries = append(entries, putEntry{rel: d, dir: true, mode: 0o700})
	}
	entries = append(entries, putEntry{rel: rel, data: data, mode: mode})
	if err := f.putEntries(ctx, name, o, entries); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// WriteMarker writes data to rel in boxsnap's folder (.boxsnap) of the
// container name, whose inspection is c, 0600 in a folder 0700, both given
// to the box's user: a .boxsnap the box made a link or a file is replaced
// by a real folder, never followed.
func (f *Files) WriteMarker(ctx context.Context, c container.InspectResponse, name, rel string, data []byte) error {
	o, err := f.boxOwner(ctx, c, name)
	if err != nil {
		return err
	}
	return f.putEntries(ctx, name, o, []putEntry{{rel: markerDir, dir: true, mode: 0o700}, {rel: rel, data: data, mode: 0o600}})
}

// ReadMarker reads rel in the container name, of at most limit bytes (why
// says what the bound is for, in a refusal).
func (f *Files) ReadMarker(ctx context.Context, name, rel string, limit int64, why string) ([]byte, error) {
	data, _, err := f.readOn(ctx, side{id: name}, rel, limit, why)
	return data, err
}

// boxOwner is the container's user as numbers: its configured user and
// group, a name read from the container's own /etc/passwd and /etc/group
// (parsed here, never run); root when it names none.
func (f *Files) boxOwner(ctx context.Context, c container.InspectResponse, name string) (owner, error) {
	spec := ""
	if c.Config != nil {
		spec = c.Config.User
	}
	if spec == "" {
		return owner{}, nil
	}
	user, group, hasGroup := strings.Cut(spec, ":")
	var o owner
	if n, err := strconv.Atoi(user); err == nil {
		o.uid = n
	} else {
		uid, gid, ok, err := f.lookUp(ctx, name, "etc/passwd", user)
		if err != nil {
			return o, err
		}
		if !ok {
			return o, fmt.Errorf("the box's user %s is not in its /etc/passwd", user)
		}
		o.uid, o.gid = uid, gid
	}
	if !hasGroup {
		return o, nil
	}
	if n, err := strconv.Atoi(group); err == nil {
		o.gid = n
		return o, nil
	}
	gid, _, ok, err := f.lookUp(ctx, name, "etc/group", group)
	if err != nil {
		return o, err
	}
	if !ok {
		return o, fmt.Errorf("the box's group %s is not in its /etc/group", group)
	}
	o.gid = gid
	return o, nil
}

// lookUp finds a name in one of the container's user databases (passwd or
// group: name:x:id:...; passwd's fourth field is the user's group).
func (f *Files) lookUp(ctx context.Context, name, db, who string) (id, gid int, ok bool, err error) {
	data, _, err := f.readOn(ctx, side{id: name}, db, maxUserDBBytes, "boxsnap reads to find the box's user")
	if err != nil {
		return 0, 0, false, fmt.Errorf("find the box's user %s: %w", who, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxUserDBBytes)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 3 || fields[0] != who {
			continue
		}
		id, err := strconv.Atoi(fields[2])
		if err != nil {
			continue
		}
		if len(fields) >= 4 {
			gid, _ = strconv.Atoi(fields[3])
		}
		return id, gid, true, nil
	}
	return 0, 0, false, nil
}

package moves

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// Scrub says what a share copy of a snapshot is, changing nothing: the
// paths its copy leaves out and the credentials it would still hold.
func (b *Moves) Scrub(ctx context.Context, ref providers.SnapshotRef, sec providers.Secrets) (*providers.ScrubReport, error) {
	p, err := b.scrubPlanOf(ctx, ref, sec)
	if err != nil {
		return nil, fmt.Errorf("scrub: %w", err)
	}
	return p.report, nil
}

// scrubEntry is one path of a snapshot as a scrub sees it.
type scrubEntry struct {
	typ, target, sameAs string
	size                int64
}

// scrubPlan is what a share copy of a snapshot leaves out: the paths it
// removes (each a whiteout in the copy's top layer) and its report.
type scrubPlan struct {
	removed []string
	report  *providers.ScrubReport
}

// scrubPlanOf reads the snapshot's files through its look container, as
// the local backend's scrub reads its manifest, in three passes of the
// engine's stream: the paths (where links lead, which folders are homes),
// then the values of the files it removes and the content of every file
// (a copy or a hard link of a removed file goes too), then a scan of what
// it keeps for the secrets' shapes and those values.
func (b *Moves) scrubPlanOf(ctx context.Context, ref providers.SnapshotRef, sec providers.Secrets) (*scrubPlan, error) {
	id, done, err := b.E.LookAt(ctx, ref.Ref)
	if err != nil {
		return nil, err
	}
	defer done()
	byPath := map[string]scrubEntry{}
	var order []string
	err = b.E.Walk(ctx, id, func(w Entry, _ io.Reader) error {
		if len(order) >= maxEntries {
			return &providers.RefusedError{Why: fmt.Sprintf("The snapshot holds more than %d paths, more than a share copy reads", maxEntries)}
		}
		byPath[w.Path] = scrubEntry{typ: w.Type, target: w.Target, sameAs: w.SameAs, size: w.Size}
		order = append(order, w.Path)
		return nil
	})
	if err != nil {
		return nil, err
	}
	targets := scrubTargetsOf(byPath, order, sec)
	removedBy := map[string]string{}
	var removed []string
	for _, p := range order {
		if t := providers.Removes(targets, p); t != "" {
			removedBy[p] = t
			if !slices.Contains(removed, t) {
				removed = append(removed, t)
			}
		}
	}
	scan := providers.NewSecretScan()
	goneSums := map[string]bool{}
	sums := map[string]string{}
	err = b.E.Walk(ctx, id, func(w Entry, content io.Reader) error {
		if w.Type != "file" || w.SameAs != "" || w.Size == 0 || byPath[w.Path].typ == "" {
			return nil
		}
		h := sha256.New()
		if _, gone := removedBy[w.Path]; gone && w.Size >= 8 {
			if err := scan.AddValues(io.TeeReader(content, h), w.Path); err != nil {
				return err
			}
			_, _ = io.Copy(h, content)
			goneSums[hex.EncodeToString(h.Sum(nil))] = true
			return nil
		}
		if _, err := io.Copy(h, content); err != nil {
			return err
		}
		sums[w.Path] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Hard links to a removed file, and copies of one, go too.
	for _, p := range order {
		e := byPath[p]
		if _, gone := removedBy[p]; gone || e.typ != "file" {
			continue
		}
		_, linkGone := removedBy[e.sameAs]
		if goneSums[sums[p]] || (e.sameAs != "" && linkGone) {
			removedBy[p] = p
			removed = append(removed, p)
		}
	}
	rep := &providers.ScrubReport{Removed: []string{}, Blocked: []providers.Finding{}}
	for _, p := range removed {
		rep.Removed = append(rep.Removed, p)
	}
	slices.Sort(rep.Removed)
	err = b.E.Walk(ctx, id, func(w Entry, content io.Reader) error {
		if _, gone := removedBy[w.Path]; gone || byPath[w.Path].typ == "" {
			return nil
		}
		what := ""
		if w.Type == "file" && w.Size > 0 {
			var err error
			if what, err = scan.Scan(content); err != nil {
				return err
			}
		}
		if what == "" && w.Type == "link" {
			what = scan.ScanString(w.Target)
		}
		if what == "" {
			what = scan.ScanString(w.Path)
		}
		if what != "" {
			rep.Blocked = append(rep.Blocked, providers.Finding{Path: w.Path, What: what})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &scrubPlan{removed: removed, report: rep}, nil
}

// scrubTargetsOf gives what a scrub removes: each target of sec in each
// home (folders, and links that lead to one), every file named as
// providers.SecretName says, anywhere, each also where the box's links
// lead it; the container's root is the box's top folder.
func scrubTargetsOf(byPath map[string]scrubEntry, order []string, sec providers.Secrets) []string {
	var dirs []string
	for _, p := range order {
		switch e := byPath[p]; e.typ {
		case "dir":
			dirs = append(dirs, p)
		case "link":
			if r, ok := realPath(byPath, p); ok && byPath[r].typ == "dir" {
				dirs = append(dirs, p)
			}
		}
	}
	var targets []string
	add := func(t string) {
		if t != "" && t != "." && !slices.Contains(targets, t) {
			targets = append(targets, t)
		}
	}
	addReal := func(t string) {
		add(t)
		dir, name := path.Dir(t), path.Base(t)
		if strings.Contains(name, "*") {
			if r, ok := realPath(byPath, dir); ok {
				add(strings.TrimPrefix(r+"/"+name, "/"))
			}
			return
		}
		if r, ok := realPath(byPath, t); ok {
			add(r)
		}
	}
	for _, t := range sec.Targets(providers.Homes(dirs)) {
		addReal(t)
	}
	for _, p := range order {
		if providers.SecretName(path.Base(p)) {
			addReal(p)
		}
	}
	return targets
}

// realPath is where p leads inside the container, every link on the way
// followed as the box's processes would (an absolute target from the
// root); ok is false for a loop.
func realPath(byPath map[string]scrubEntry, p string) (string, bool) {
	parts := strings.Split(p, "/")
	cur, hops := "", 0
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch part {
		case "", ".":
			continue
		case "..":
			if cur = path.Dir(cur); cur == "." || cur == "/" {
				cur = ""
			}
			continue
		}
		next := strings.TrimPrefix(cur+"/"+part, "/")
		e := byPath[next]
		if e.typ != "link" {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", false
		}
		t := e.target
		if path.IsAbs(t) {
			cur = ""
		}
		parts = append(strings.Split(t, "/"), parts[i+1:]...)
		i = -1
	}
	return cur, true
}

// scrubLayer is the top layer of a share copy: a whiteout for each path
// the scrub removes, and its report.
func (b *Moves) scrubLayer(ctx context.Context, ref providers.SnapshotRef, sec providers.Secrets) (carriedLayer, *providers.ScrubReport, error) {
	p, err := b.scrubPlanOf(ctx, ref, sec)
	if err != nil {
		return carriedLayer{}, nil, err
	}
	f, err := os.CreateTemp("", "boxsnap-export-*.tar")
	if err != nil {
		return carriedLayer{}, nil, fmt.Errorf("make a file for the copy's layer: %w", err)
	}
	h := sha256.New()
	tw := tar.NewWriter(io.MultiWriter(f, h))
	for _, r := range slices.Sorted(slices.Values(p.removed)) {
		dir, base := path.Split(r)
		if err := tw.WriteHeader(&tar.Header{Name: dir + ".wh." + base, Typeflag: tar.TypeReg, Mode: 0o600}); err != nil {
			removeLayerFile(f)
			return carriedLayer{}, nil, fmt.Errorf("write the copy's layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		removeLayerFile(f)
		return carriedLayer{}, nil, fmt.Errorf("write the copy's layer: %w", err)
	}
	return carriedLayer{diffID: "sha256:" + hex.EncodeToString(h.Sum(nil)), file: f}, p.report, nil
}

package exports

import (
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Scrub says what a share copy of a snapshot is, changing nothing.
func (b *Exports) Scrub(ctx context.Context, ref providers.SnapshotRef, sec providers.Secrets) (*providers.ScrubReport, error) {
	m, err := b.LoadUsable(ref)
	if err != nil {
		return nil, fmt.Errorf("scrub: %w", err)
	}
	_, rep, err := b.scrubManifest(ctx, m, sec)
	return rep, err
}

// maxHops bounds the links followed to find one path's real place.
const maxHops = 40

// linkTree finds where a path of a snapshot really is, following the links
// its manifest holds, as the box's processes would: a relative target from
// the link's folder, an absolute one from the box's own folder when it
// leads inside it (elsewhere is not in the box, nor in a copy).
type linkTree struct {
	byPath map[string]*store.Entry
	boxDir string
}

// real is the path p leads to inside the box, every link on the way and
// its last component followed; ok is false when it leads out of the box
// or round in a loop.
func (lt *linkTree) real(p string) (string, bool) {
	parts := strings.Split(p, "/")
	cur, hops := "", 0
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch part {
		case "", ".":
			continue
		case "..":
			if cur == "" {
				return "", false
			}
			if cur = path.Dir(cur); cur == "." {
				cur = ""
			}
			continue
		}
		next := part
		if cur != "" {
			next = cur + "/" + part
		}
		e := lt.byPath[next]
		if e == nil || e.Type != store.TypeLink {
			cur = next
			continue
		}
		if hops++; hops > maxHops {
			return "", false
		}
		t := e.Target
		if path.IsAbs(t) {
			rel, ok := strings.CutPrefix(path.Clean(t), lt.boxDir+"/")
			if !ok {
				if path.Clean(t) != lt.boxDir {
					return "", false
				}
				rel = ""
			}
			t, cur = rel, ""
		}
		parts = append(strings.Split(t, "/"), parts[i+1:]...)
		i = -1
	}
	return cur, true
}

// scrubManifest is a copy of m without what sec lists, and its report. What
// it removes: each target of sec in each home, where the box's links lead
// (a home, or a .ssh, that is a link is scrubbed where it leads, inside the
// box); every file named as providers.SecretName says, anywhere; and every
// file whose content is that of a removed one (a hard link to it, or a
// copy). What it keeps is then scanned, content, link targets and paths,
// for the well-known shapes and the removed files' values: what it finds
// is Blocked.
func (b *Exports) scrubManifest(ctx context.Context, m *store.Manifest, sec providers.Secrets) (*store.Manifest, *providers.ScrubReport, error) {
	lt := &linkTree{byPath: make(map[string]*store.Entry, len(m.Entries)), boxDir: path.Clean(b.Store.BoxDir(m.Guest.Ref))}
	for i := range m.Entries {
		lt.byPath[m.Entries[i].Path] = &m.Entries[i]
	}
	targets := scrubTargets(m, sec, lt)
	scan := providers.NewSecretScan()
	c, removed, err := b.withoutTargets(m, targets, scan)
	if err != nil {
		return nil, nil, err
	}
	rep := &providers.ScrubReport{Removed: removed, Blocked: []providers.Finding{}}
	if rep.Removed == nil {
		rep.Removed = []string{}
	}
	if rep.Blocked, err = b.scanKept(ctx, c, scan, rep.Blocked); err != nil {
		return nil, nil, err
	}
	return c, rep, nil
}

// valuesOf adds the values of a removed file's content to the scan.
func (b *Exports) valuesOf(scan *providers.SecretScan, e store.Entry) error {
	f, err := os.Open(b.ContentPath(e.Hash))
	if err != nil {
		return fmt.Errorf("scrub: %w: content %s is missing", store.ErrDamaged, e.Hash[:12])
	}
	defer f.Close()
	if err := scan.AddValues(f, e.Path); err != nil {
		return fmt.Errorf("scrub: read content %s: %w", e.Hash[:12], err)
	}
	return nil
}

// scanContent scans one content file of the store.
func (b *Exports) scanContent(scan *providers.SecretScan, h string) (string, error) {
	f, err := os.Open(b.ContentPath(h))
	if err != nil {
		return "", fmt.Errorf("scrub: %w: content %s is missing", store.ErrDamaged, h[:12])
	}
	defer f.Close()
	what, err := scan.Scan(f)
	if err != nil {
		return "", fmt.Errorf("scrub: read content %s: %w", h[:12], err)
	}
	return what, nil
}

// scrubTargets gives what a scrub of m removes: each target of sec in each
// home (real folders, and links that lead to one), and every file named as
// providers.SecretName says, anywhere; each also where the box's links
// lead it (lt).
func scrubTargets(m *store.Manifest, sec providers.Secrets, lt *linkTree) []string {
	isDir := func(p string) bool {
		e := lt.byPath[p]
		return e != nil && e.Type == store.TypeDir
	}
	// Homes: real folders, and links that lead to one.
	var dirs []string
	for i := range m.Entries {
		e := &m.Entries[i]
		switch e.Type {
		case store.TypeDir:
			dirs = append(dirs, e.Path)
		case store.TypeLink:
			if r, ok := lt.real(e.Path); ok && isDir(r) {
				dirs = append(dirs, e.Path)
			}
		}
	}
	var targets []string
	seenT := map[string]bool{}
	add := func(t string) {
		if t != "" && t != "." && !seenT[t] {
			seenT[t] = true
			targets = append(targets, t)
		}
	}
	// A target, and where the box's links lead it.
	addReal := func(t string) {
		add(t)
		dir, name := path.Dir(t), path.Base(t)
		if strings.Contains(name, "*") {
			if r, ok := lt.real(dir); ok {
				add(strings.TrimPrefix(r+"/"+name, "/"))
			}
			return
		}
		if r, ok := lt.real(t); ok {
			add(r)
		}
	}
	for _, t := range sec.Targets(providers.Homes(dirs)) {
		addReal(t)
	}
	for i := range m.Entries {
		if providers.SecretName(path.Base(m.Entries[i].Path)) {
			addReal(m.Entries[i].Path)
		}
	}
	return targets
}

// withoutTargets gives a copy of m without targets and what they hold, nor
// any file whose content is that of a removed one (a hard link to it, or a
// copy), with its files and bytes counted again, and the paths it removed,
// sorted. The values of the removed files go into scan.
func (b *Exports) withoutTargets(m *store.Manifest, targets []string, scan *providers.SecretScan) (*store.Manifest, []string, error) {
	c := *m
	c.Entries = make([]store.Entry, 0, len(m.Entries))
	c.Files, c.Bytes, c.AddedBytes = 0, 0, 0
	seen := map[string]bool{}
	var removed []string
	gone := map[string]string{} // the content of removed files, to a path of one
	var kept []store.Entry
	for _, e := range m.Entries {
		t := providers.Removes(targets, e.Path)
		if t == "" || e.Path == "." {
			kept = append(kept, e)
			continue
		}
		if !seen[t] {
			seen[t] = true
			removed = append(removed, t)
		}
		if e.Type == store.TypeFile && e.Size >= 8 {
			if _, ok := gone[e.Hash]; !ok {
				gone[e.Hash] = e.Path
				if err := b.valuesOf(scan, e); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	// Hard links to a removed file, and copies of one, go too.
	for _, e := range kept {
		if e.Type == store.TypeFile {
			if _, ok := gone[e.Hash]; ok {
				if !seen[e.Path] {
					seen[e.Path] = true
					removed = append(removed, e.Path)
				}
				continue
			}
			c.Files++
			c.Bytes += e.Size
		}
		c.Entries = append(c.Entries, e)
	}
	sort.Strings(removed)
	return &c, removed, nil
}

// scanKept scans what c keeps for the well-known shapes and scan's values:
// each content once, then what the manifest itself carries (paths and link
// targets). It gives blocked with what it finds.
func (b *Exports) scanKept(ctx context.Context, c *store.Manifest, scan *providers.SecretScan, blocked []providers.Finding) ([]providers.Finding, error) {
	found := map[string]string{}
	for _, e := range c.Entries {
		if e.Type != store.TypeFile || e.Size == 0 {
			continue
		}
		if _, ok := found[e.Hash]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		what, err := b.scanContent(scan, e.Hash)
		if err != nil {
			return nil, err
		}
		found[e.Hash] = what
	}
	for _, e := range c.Entries {
		what := ""
		if e.Type == store.TypeFile {
			what = found[e.Hash]
		}
		if what == "" && e.Type == store.TypeLink {
			what = scan.ScanString(e.Target)
		}
		if what == "" {
			what = scan.ScanString(e.Path)
		}
		if what != "" {
			blocked = append(blocked, providers.Finding{Path: e.Path, What: what})
		}
	}
	return blocked, nil
}

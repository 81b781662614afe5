package providers

import (
	"path"
	"strings"
)

// Secrets is the one list of what a copy of a box leaves behind: a fork and
// the copy a share code hands out both remove these paths. The README lists
// them; the settings can add home paths (Settings "Also remove from copies").
type Secrets struct {
	// Home are sign-in and key files, relative to each home-like folder of
	// the box: its top folder, root, and every folder under home and Users.
	Home []string
	// System are paths relative to the box's top folder: boxsnap's own access
	// file and a whole system's identity. A "*" matches within one name.
	System []string
}

// DefaultSecrets is the list moatbox removes from "/root and each home
// folder" before a share code works, BB's own, boxsnap's access file, and the
// identity files a new machine must make anew.
func DefaultSecrets() Secrets {
	return Secrets{
		Home: []string{
			".claude/.credentials.json", ".claude.json", ".codex/auth.json",
			".local/share/opencode/auth.json", ".config/gh/hosts.yml", ".git-credentials",
			".netrc", ".npmrc", ".pypirc", ".docker/config.json", ".aws/credentials",
			".aws/config", ".config/gcloud", ".kube/config", ".ssh",
			".bb-machines", ".config/bb-box/env",
		},
		System: []string{
			".boxsnap/env",
			"etc/machine-id", "var/lib/dbus/machine-id", "var/lib/tailscale", "etc/ssh/ssh_host_*",
		},
	}
}

// With adds home paths (the settings' own) to the list; blank ones and
// repeats are dropped.
func (s Secrets) With(home []string) Secrets {
	out := Secrets{Home: append([]string(nil), s.Home...), System: append([]string(nil), s.System...)}
	seen := map[string]bool{}
	for _, h := range out.Home {
		seen[h] = true
	}
	for _, h := range home {
		h = strings.Trim(strings.TrimSpace(h), "/")
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		out.Home = append(out.Home, h)
	}
	return out
}

// Homes are the home-like folders of a box whose folders are dirs (paths
// relative to the box, slash-separated): "" (the box's top folder), "root",
// and each folder directly under "home" and "Users".
func Homes(dirs []string) []string {
	out := []string{""}
	for _, d := range dirs {
		switch {
		case d == "root":
			out = append(out, d)
		case strings.HasPrefix(d, "home/") || strings.HasPrefix(d, "Users/"):
			if !strings.Contains(d[strings.IndexByte(d, '/')+1:], "/") {
				out = append(out, d)
			}
		}
	}
	return out
}

// Targets are the paths the list removes in a box with these home-like
// folders (see Homes); a target with "*" is a pattern for path.Match.
func (s Secrets) Targets(homes []string) []string {
	var out []string
	for _, h := range homes {
		for _, c := range s.Home {
			out = append(out, strings.TrimPrefix(h+"/"+c, "/"))
		}
	}
	return append(out, s.System...)
}

// Removes says which target removes p (a path relative to the box), or "".
// A target removes itself and everything under it.
func Removes(targets []string, p string) string {
	for _, t := range targets {
		if p == t || strings.HasPrefix(p, t+"/") {
			return t
		}
		if strings.Contains(t, "*") {
			// Match the pattern against p's leading names of its depth.
			depth := strings.Count(t, "/") + 1
			parts := strings.SplitN(p, "/", depth+1)
			if len(parts) >= depth {
				lead := strings.Join(parts[:depth], "/")
				if ok, _ := path.Match(t, lead); ok {
					return lead
				}
			}
		}
	}
	return ""
}

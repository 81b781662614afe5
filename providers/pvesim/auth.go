package pvesim

import (
	"crypto/subtle"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// access is who a request comes from and what each principal may do: API
// tokens, tickets and the privileges their grants give on each path, read
// from the cluster's principals.
type access struct {
	*cluster
}

// allPrivileges are Proxmox VE's privileges (AC AccessControl.pm
// $privgroups), the ones Administrator and root@pam hold.
func allPrivileges() []string {
	return []string{
		"Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.AllocateTemplate", "Datastore.Audit",
		"Group.Allocate", "Permissions.Modify", "Pool.Allocate", "Pool.Audit", "Realm.Allocate", "Realm.AllocateUser",
		"SDN.Allocate", "SDN.Audit", "Sys.Audit", "Sys.Console", "Sys.Incoming", "Sys.Modify", "Sys.PowerMgmt", "Sys.Syslog",
		"User.Modify", "VM.Allocate", "VM.Audit", "VM.Backup", "VM.Clone", "VM.Config.CDROM", "VM.Config.CPU",
		"VM.Config.Cloudinit", "VM.Config.Disk", "VM.Config.HWType", "VM.Config.Memory", "VM.Config.Network",
		"VM.Config.Options", "VM.Console", "VM.Migrate", "VM.Monitor", "VM.PowerMgmt", "VM.Snapshot", "VM.Snapshot.Rollback",
	}
}

// builtinRoles are the roles Proxmox VE defines (AC AccessControl.pm
// $special_roles and create_roles), with the privileges a snapshot manager
// meets.
func builtinRole(name string) ([]string, bool) {
	vmAdmin := []string{"VM.Allocate", "VM.Audit", "VM.Backup", "VM.Clone", "VM.Config.CDROM", "VM.Config.CPU",
		"VM.Config.Cloudinit", "VM.Config.Disk", "VM.Config.HWType", "VM.Config.Memory", "VM.Config.Network",
		"VM.Config.Options", "VM.Console", "VM.Migrate", "VM.Monitor", "VM.PowerMgmt", "VM.Snapshot", "VM.Snapshot.Rollback"}
	switch name {
	case "Administrator":
		return allPrivileges(), true
	case "NoAccess":
		return nil, true
	case "PVEVMAdmin":
		return vmAdmin, true
	case "PVEVMUser":
		return []string{"VM.Audit", "VM.Backup", "VM.Config.CDROM", "VM.Config.Cloudinit", "VM.Console", "VM.PowerMgmt"}, true
	case "PVEAuditor":
		return []string{"Datastore.Audit", "Pool.Audit", "SDN.Audit", "Sys.Audit", "VM.Audit"}, true
	case "PVEDatastoreUser":
		return []string{"Datastore.AllocateSpace", "Datastore.Audit"}, true
	case "PVEDatastoreAdmin":
		return []string{"Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.AllocateTemplate", "Datastore.Audit"}, true
	case "PVEPoolUser":
		return []string{"Pool.Audit"}, true
	case "PVEPoolAdmin":
		return []string{"Pool.Allocate", "Pool.Audit"}, true
	}
	return nil, false
}

// expandPrivs turns a grant's names (privileges or roles) into privileges.
func expandPrivs(names []string) []string {
	var out []string
	for _, n := range names {
		if privs, ok := builtinRole(n); ok {
			out = append(out, privs...)
			continue
		}
		out = append(out, n)
	}
	return out
}

// pathLevels lists "/", "/vms", "/vms/100" for "/vms/100".
func pathLevels(path string) []string {
	levels := []string{"/"}
	cur := ""
	for _, seg := range strings.Split(strings.Trim(path, "/"), "/") {
		if seg == "" {
			continue
		}
		cur += "/" + seg
		levels = append(levels, cur)
	}
	return levels
}

// privsFromGrants computes the privileges that grants give on path, as AC
// AccessControl.pm roles() does: walking from "/" to the path, the entries
// at a level that apply (all at the path itself, propagating ones above it)
// replace what was inherited.
func privsFromGrants(grants []Grant, path string) map[string]bool {
	levels := pathLevels(path)
	var cur map[string]bool
	for i, lvl := range levels {
		final := i == len(levels)-1
		var next map[string]bool
		for _, g := range grants {
			if normPath(g.Path) != lvl || !(final || g.Propagate) {
				continue
			}
			if next == nil {
				next = map[string]bool{}
			}
			for _, p := range expandPrivs(g.Privs) {
				next[p] = true
			}
		}
		if next != nil {
			cur = next
		}
	}
	if cur == nil {
		cur = map[string]bool{}
	}
	return cur
}

func normPath(p string) string {
	p = "/" + strings.Trim(p, "/")
	return p
}

// privileges returns what a principal holds on path. A guest's path also
// gets what its pool's path gives (AC AccessControl.pm: a VM or storage in
// a pool inherits the pool's ACL). A token's rights are its own grants,
// intersected with its user's when the user has grants (privilege
// separation, AC AccessControl.pm permission()).
func (s *access) privileges(p *principal, path string) map[string]bool {
	if p.root {
		out := map[string]bool{}
		for _, priv := range allPrivileges() {
			out[priv] = true
		}
		return out
	}
	out := s.grantPrivs(p.grants, path)
	if user, _, isToken := strings.Cut(p.id, "!"); isToken {
		if u := s.users[user]; u != nil && (u.root || len(u.grants) > 0) {
			up := s.privileges(u, path)
			for k := range out {
				if !up[k] {
					delete(out, k)
				}
			}
		}
	}
	return out
}

func (s *access) grantPrivs(grants []Grant, path string) map[string]bool {
	out := privsFromGrants(grants, path)
	if vmid, ok := strings.CutPrefix(normPath(path), "/vms/"); ok {
		if id, err := strconv.Atoi(vmid); err == nil {
			if g := s.guests[id]; g != nil && g.pool != "" {
				// AC RPCEnvironment.pm compile_acl_path: the roles at the
				// pool's own path reach its members.
				for k := range privsFromGrants(grants, "/pool/"+g.pool) {
					out[k] = true
				}
			}
		}
	}
	return out
}

// check is RPCEnvironment's check: every priv on path, or 403 with
// Proxmox's words (AC RPCEnvironment.pm check_full/raise_perm_exc).
func (s *access) check(p *principal, path string, privs ...string) error {
	have := s.privileges(p, path)
	for _, priv := range privs {
		if !have[priv] {
			return permErr(path, priv)
		}
	}
	return nil
}

// checkAny passes when the principal holds at least one of privs
// (AC RPCEnvironment.pm check_any: the 403 names them joined by "|").
func (s *access) checkAny(p *principal, path string, privs ...string) error {
	have := s.privileges(p, path)
	for _, priv := range privs {
		if have[priv] {
			return nil
		}
	}
	return permErr(path, strings.Join(privs, "|"))
}

func (s *access) has(p *principal, path, priv string) bool { return s.privileges(p, path)[priv] }

func permErr(path, priv string) error {
	return &apiError{status: http.StatusForbidden, message: "Permission check failed (" + path + ", " + priv + ")"}
}

// authenticate finds the caller of a request: an API token
// (Authorization: PVEAPIToken=USER@REALM!TOKENID=SECRET, split at the last
// '=', AC AccessControl.pm verify_token) or a ticket (cookie PVEAuthCookie,
// or the Authorization header the Telmate client sends), which needs the
// CSRFPreventionToken header on anything but GET (HS AnyEvent.pm).
func (s *access) authenticate(r *http.Request) (*principal, error) {
	authz := r.Header.Get("Authorization")
	if rest, ok := strings.CutPrefix(authz, "PVEAPIToken="); ok {
		i := strings.LastIndex(rest, "=")
		if i <= 0 {
			return nil, errUnauthorized()
		}
		id, secret := rest[:i], rest[i+1:]
		tok := s.tokens[id]
		if tok == nil || subtle.ConstantTimeCompare([]byte(tok.secret), []byte(secret)) != 1 {
			return nil, errUnauthorized()
		}
		return tok, nil
	}
	tk := ""
	if rest, ok := strings.CutPrefix(authz, "PVEAuthCookie="); ok {
		tk = rest
	} else if c, err := r.Cookie("PVEAuthCookie"); err == nil {
		tk = c.Value
	}
	if tk == "" {
		return nil, &apiError{status: http.StatusUnauthorized, message: "No ticket"}
	}
	t, ok := s.tickets[tk]
	if !ok || s.clock.now().After(t.expires) {
		return nil, errUnauthorized()
	}
	if r.Method != http.MethodGet {
		want := s.csrf[tk]
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("CSRFPreventionToken")), []byte(want)) != 1 {
			return nil, &apiError{status: http.StatusUnauthorized, message: "Permission denied - invalid csrf token"}
		}
	}
	p := s.users[t.user]
	if p == nil {
		return nil, errUnauthorized()
	}
	return p, nil
}

// errUnauthorized is HS AnyEvent.pm's answer to a bad token or ticket.
func errUnauthorized() error {
	return &apiError{status: http.StatusUnauthorized, message: "Authentication failed!"}
}

// permissionsJSON is GET /access/permissions (AC API2/AccessControl.pm
// permissions, RPCEnvironment.pm get_effective_permissions):
// {"<path>": {"<Priv>": propagate}} for the top-level paths, every path in
// the ACL tree, and every pool member's /vms/<vmid>; paths without
// privileges left out.
func (s *access) permissionsJSON(p *principal, onlyPath string) map[string]map[string]int {
	paths := map[string]bool{}
	if onlyPath != "" {
		paths[normPath(onlyPath)] = true
	} else {
		for _, top := range []string{"/", "/access", "/access/groups", "/nodes", "/pool", "/sdn", "/storage", "/vms"} {
			paths[top] = true
		}
		for _, group := range []map[string]*principal{s.users, s.tokens} {
			for _, q := range group {
				for _, g := range q.grants {
					paths[normPath(g.Path)] = true
				}
			}
		}
		for _, g := range s.guests {
			if g.pool != "" {
				paths["/vms/"+itoa(g.vmid)] = true
			}
		}
	}
	out := map[string]map[string]int{}
	for path := range paths {
		privs := s.privileges(p, path)
		if len(privs) == 0 {
			continue
		}
		m := map[string]int{}
		for priv := range privs {
			m[priv] = s.propagates(p, path, priv)
		}
		out[path] = m
	}
	return out
}

// propagates reports 1 when the privilege also holds on the paths below
// path (the value /access/permissions gives each privilege).
func (s *access) propagates(p *principal, path, priv string) int {
	if p.root {
		return 1
	}
	child := strings.TrimRight(normPath(path), "/") + "/pvesim-probe"
	if s.privileges(p, child)[priv] {
		return 1
	}
	return 0
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

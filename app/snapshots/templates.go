package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// BoxTemplate is what the owner makes available for new boxes: an agent makes
// a box only from one of these, by name. Source is the backend's own: on the
// local backend a folder's name inside the templates folder, on Proxmox a
// template VMID, on Docker an image reference. Command, User, Env and Limits
// are for boxes with a process.
type BoxTemplate struct {
	Name    string `json:"name"`
	Backend string `json:"backend"`
	Kind    string `json:"kind"`
	Source  string `json:"source,omitempty"`
	Command string `json:"command,omitempty"`
	// User is the unprivileged user the process runs as; empty is the
	// backend's own (boxsnap-box on the local backend).
	User      string              `json:"user,omitempty"`
	Env       map[string]string   `json:"env,omitempty"`
	Limits    providers.BoxLimits `json:"limits"`
	HasScreen bool                `json:"hasScreen,omitempty"`
	ScreenURL string              `json:"screenUrl,omitempty"`
	// NoNetwork turns the template's network off: a box made from it has
	// only its own loopback. Off by default: a box reaches outside
	// networks, never the host's loopback (local backend).
	NoNetwork bool `json:"noNetwork,omitempty"`
}

// templateOf is the template of a box_templates row, its environment
// decoded.
func templateOf(r db.BoxTemplate) (BoxTemplate, error) {
	t := BoxTemplate{Name: r.Name, Backend: r.BackendID, Kind: r.Kind, Source: r.Source, Command: r.Command,
		User: r.RunAs, HasScreen: r.HasScreen, ScreenURL: r.ScreenURL, NoNetwork: !r.Network,
		Limits: providers.BoxLimits{MemoryBytes: r.MemoryBytes, Processes: r.Processes, OpenFiles: r.OpenFiles, DiskBytes: r.DiskBytes}}
	if err := json.Unmarshal(r.Env, &t.Env); err != nil {
		return BoxTemplate{}, fmt.Errorf("box template %s: its environment: %w", r.Name, err)
	}
	return t, nil
}

// The bounds of a box template.
const (
	MaxTemplateEnv     = 64
	MaxTemplateCommand = 4096
	MaxTemplateSource  = 255
)

var (
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	userNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
)

// Check refuses, in words, a box template that breaks a rule: its name is a
// box's name (the machine rule), its backend one boxsnap has, its text valid,
// its user not root, its limits not below zero. A source on the local
// backend is a folder's name in the templates folder: never a full path,
// never "..", never a folder below another (section "Security model").
func (s *Boxes) CheckTemplate(t BoxTemplate) error {
	var errs []error
	if !boxNameRE.MatchString(t.Name) {
		errs = append(errs, errors.New(wordsMachineName("A box template's name")))
	}
	b, ok := s.backends[t.Backend]
	if !ok {
		errs = append(errs, errors.New(wordsChooseBackend(s.order)))
	}
	if t.Kind == "" || CheckLine("A box template's kind", t.Kind) != nil || len(t.Kind) > 40 {
		errs = append(errs, errors.New(wordsTemplateKind))
	}
	if err := CheckLine("A box template's source", t.Source); err != nil {
		errs = append(errs, err)
	} else if len(t.Source) > MaxTemplateSource {
		errs = append(errs, errors.New(wordsTemplateSource(MaxTemplateSource)))
	} else if ok && b.Kind == "local" && t.Source != "" {
		if err := providers.CheckFolderName(t.Source); err != nil {
			errs = append(errs, err)
		}
	}
	if err := CheckText("A box template's command", t.Command); err != nil {
		errs = append(errs, err)
	} else if len(t.Command) > MaxTemplateCommand {
		errs = append(errs, errors.New(wordsTemplateCommand(MaxTemplateCommand)))
	}
	if t.User != "" && (!userNameRE.MatchString(t.User) || t.User == "root") {
		errs = append(errs, errors.New(wordsTemplateUser))
	}
	if len(t.Env) > MaxTemplateEnv {
		errs = append(errs, errors.New(wordsTemplateEnv(MaxTemplateEnv)))
	}
	for _, k := range sortedKeys(t.Env) {
		if !envNameRE.MatchString(k) {
			errs = append(errs, errors.New(wordsEnvName))
			break
		}
		if err := CheckLine("An environment variable's value", t.Env[k]); err != nil {
			errs = append(errs, err)
			break
		}
	}
	if t.Limits.MemoryBytes < 0 || t.Limits.Processes < 0 || t.Limits.OpenFiles < 0 || t.Limits.DiskBytes < 0 {
		errs = append(errs, errors.New(wordsTemplateLimits))
	}
	if err := CheckLine("A box template's screen address", t.ScreenURL); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return refusal(CodeInvalid, err.Error())
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Templates lists the box templates. An agent reads them too: it chooses
// one by name.
func (s *Boxes) Templates(ctx context.Context) ([]BoxTemplate, error) {
	all, err := s.st.TemplateList(ctx, s.st.Pool)
	if err != nil {
		return nil, fmt.Errorf("list box templates: %w", err)
	}
	out := make([]BoxTemplate, len(all))
	for i, r := range all {
		if out[i], err = templateOf(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// errNoTemplate is the refusal of a template name boxsnap does not have.
func noTemplate() *Refusal {
	return refusal(CodeNotFound, wordsNoTemplate)
}

// Template reads one box template by its name.
func (s *Boxes) Template(ctx context.Context, name string) (BoxTemplate, error) {
	if !boxNameRE.MatchString(name) {
		return BoxTemplate{}, noTemplate()
	}
	r, err := s.st.TemplateByName(ctx, s.st.Pool, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return BoxTemplate{}, noTemplate()
	}
	if err != nil {
		return BoxTemplate{}, fmt.Errorf("read box template: %w", err)
	}
	return templateOf(r)
}

// SaveTemplate adds or changes a box template; only the person may.
func (s *Boxes) SaveTemplate(ctx context.Context, c Caller, t BoxTemplate) error {
	if !c.IsPerson() {
		return refusal(CodeForbidden, wordsOnlyPersonTemplates)
	}
	if t.Env == nil {
		t.Env = map[string]string{}
	}
	if err := s.CheckTemplate(t); err != nil {
		return err
	}
	env, err := json.Marshal(t.Env)
	if err != nil {
		return fmt.Errorf("save box template: %w", err)
	}
	if err := s.st.TemplateUpsert(ctx, s.st.Pool, db.TemplateUpsertParams{Name: t.Name, BackendID: t.Backend, Kind: t.Kind,
		Source: t.Source, Command: t.Command, RunAs: t.User, Env: env, MemoryBytes: t.Limits.MemoryBytes,
		Processes: t.Limits.Processes, OpenFiles: t.Limits.OpenFiles, HasScreen: t.HasScreen, ScreenURL: t.ScreenURL,
		Network: !t.NoNetwork, DiskBytes: t.Limits.DiskBytes}); err != nil {
		return fmt.Errorf("save box template: %w", err)
	}
	return nil
}

// DeleteTemplate removes a box template; boxes made from it stay. Only the
// person may.
func (s *Boxes) DeleteTemplate(ctx context.Context, c Caller, name string) error {
	if !c.IsPerson() {
		return refusal(CodeForbidden, wordsOnlyPersonTemplates)
	}
	if !boxNameRE.MatchString(name) {
		return noTemplate()
	}
	n, err := s.st.TemplateDelete(ctx, s.st.Pool, name)
	if err != nil {
		return fmt.Errorf("delete box template: %w", err)
	}
	if n == 0 {
		return noTemplate()
	}
	return nil
}

// spec is what the template asks of a backend for box.
func (t BoxTemplate) spec(box providers.BoxIdentity, host string) providers.BoxSpec {
	spec := providers.BoxSpec{Box: box, Template: t.Source, Command: t.Command, Host: host,
		User: t.User, Env: maps.Clone(t.Env), Limits: t.Limits, NoNetwork: t.NoNetwork}
	if t.HasScreen {
		spec.Publish = screenPorts(t.ScreenURL)
	}
	return spec
}

// screenPorts is the port a box serves its screen on when its screen
// address is on the host's loopback (http://127.0.0.1:PORT/): the backend
// publishes it from the host's loopback into the box's own network.
func screenPorts(screen string) []int {
	u, err := url.Parse(screen)
	if err != nil || u.Port() == "" {
		return nil
	}
	if h := u.Hostname(); h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return nil
		}
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil || p < 1 || p > 65535 {
		return nil
	}
	return []int{p}
}

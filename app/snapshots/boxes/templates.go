package boxes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/jackc/pgx/v5"
)

// templateOf is the template of a box_templates row, its environment
// decoded.
func templateOf(r db.BoxTemplate) (snapshots.BoxTemplate, error) {
	t := snapshots.BoxTemplate{Name: r.Name, Backend: r.BackendID, Kind: r.Kind, Source: r.Source, Command: r.Command,
		User: r.RunAs, HasScreen: r.HasScreen, ScreenURL: r.ScreenURL, NoNetwork: !r.Network,
		Limits: providers.BoxLimits{MemoryBytes: r.MemoryBytes, Processes: r.Processes, OpenFiles: r.OpenFiles, DiskBytes: r.DiskBytes}}
	if err := json.Unmarshal(r.Env, &t.Env); err != nil {
		return snapshots.BoxTemplate{}, fmt.Errorf("box template %s: its environment: %w", r.Name, err)
	}
	return t, nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

var userNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// Check refuses, in words, a box template that breaks a rule: its name is a
// box's name (the machine rule), its backend one boxsnap has, its text valid,
// its user not root, its limits not below zero. A source on the local
// backend is a folder's name in the templates folder: never a full path,
// never "..", never a folder below another (section "Security model").
func (s *TemplateKeeper) CheckTemplate(t snapshots.BoxTemplate) error {
	var errs []error
	if !snapshots.BoxNameRE.MatchString(t.Name) {
		errs = append(errs, errors.New(snapshots.MachineNameWords("A box template's name")))
	}
	b, ok := s.configured(t.Backend)
	if !ok {
		errs = append(errs, errors.New(chooseBackendWords(s.order())))
	}
	if t.Kind == "" || snapshots.CheckLine("A box template's kind", t.Kind) != nil || len(t.Kind) > 40 {
		errs = append(errs, errors.New(templateKindWords))
	}
	if err := snapshots.CheckLine("A box template's source", t.Source); err != nil {
		errs = append(errs, err)
	} else if len(t.Source) > snapshots.MaxTemplateSource {
		errs = append(errs, errors.New(templateSourceWords(snapshots.MaxTemplateSource)))
	} else if ok && b.Kind == "local" && t.Source != "" {
		if err := providers.CheckFolderName(t.Source); err != nil {
			errs = append(errs, err)
		}
	}
	if err := snapshots.CheckText("A box template's command", t.Command); err != nil {
		errs = append(errs, err)
	} else if len(t.Command) > snapshots.MaxTemplateCommand {
		errs = append(errs, errors.New(templateCommandWords(snapshots.MaxTemplateCommand)))
	}
	if t.User != "" && (!userNameRE.MatchString(t.User) || t.User == "root") {
		errs = append(errs, errors.New(templateUserWords))
	}
	if len(t.Env) > snapshots.MaxTemplateEnv {
		errs = append(errs, errors.New(templateEnvWords(snapshots.MaxTemplateEnv)))
	}
	for _, k := range sortedKeys(t.Env) {
		if !envNameRE.MatchString(k) {
			errs = append(errs, errors.New(envNameWords))
			break
		}
		if err := snapshots.CheckLine("An environment variable's value", t.Env[k]); err != nil {
			errs = append(errs, err)
			break
		}
	}
	if t.Limits.MemoryBytes < 0 || t.Limits.Processes < 0 || t.Limits.OpenFiles < 0 || t.Limits.DiskBytes < 0 {
		errs = append(errs, errors.New(templateLimitsWords))
	}
	if err := snapshots.CheckLine("A box template's screen address", t.ScreenURL); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: err.Error()}
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
func (s *TemplateKeeper) Templates(ctx context.Context) ([]snapshots.BoxTemplate, error) {
	all, err := s.st.TemplateList(ctx, s.st.Pool)
	if err != nil {
		return nil, fmt.Errorf("list box templates: %w", err)
	}
	out := make([]snapshots.BoxTemplate, len(all))
	for i, r := range all {
		if out[i], err = templateOf(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// errNoTemplate is the refusal of a template name boxsnap does not have.
func noTemplate() *snapshots.Refusal {
	return &snapshots.Refusal{Code: snapshots.CodeNotFound, Words: noTemplateWords}
}

// Template reads one box template by its name.
func (s *TemplateKeeper) Template(ctx context.Context, name string) (snapshots.BoxTemplate, error) {
	if !snapshots.BoxNameRE.MatchString(name) {
		return snapshots.BoxTemplate{}, noTemplate()
	}
	r, err := s.st.TemplateByName(ctx, s.st.Pool, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return snapshots.BoxTemplate{}, noTemplate()
	}
	if err != nil {
		return snapshots.BoxTemplate{}, fmt.Errorf("read box template: %w", err)
	}
	return templateOf(r)
}

// SaveTemplate adds or changes a box template; only the person may.
func (s *TemplateKeeper) SaveTemplate(ctx context.Context, c snapshots.Caller, t snapshots.BoxTemplate) error {
	if !c.IsPerson() {
		return &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonTemplatesWords}
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
func (s *TemplateKeeper) DeleteTemplate(ctx context.Context, c snapshots.Caller, name string) error {
	if !c.IsPerson() {
		return &snapshots.Refusal{Code: snapshots.CodeForbidden, Words: onlyPersonTemplatesWords}
	}
	if !snapshots.BoxNameRE.MatchString(name) {
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

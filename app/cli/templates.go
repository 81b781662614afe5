package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/wire"
)

// templates is `snapshot templates`: the box templates agents make boxes
// from.
func templates(ctx context.Context, c *client, _ []string, _ any, out io.Writer) error {
	var a wire.TemplatesAnswer
	if err := c.do(ctx, "GET", "/templates", nil, &a); err != nil {
		return err
	}
	if len(a.Templates) == 0 {
		_, err := fmt.Fprintln(out, snapshots.NoTemplatesWords)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBACKEND\tKIND\tSOURCE\tCOMMAND\tUSER")
	for _, t := range a.Templates {
		user := t.User
		if user == "" {
			user = "boxsnap-box"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Backend, t.Kind, t.Source, t.Command, user)
	}
	return tw.Flush()
}

type templateOpts struct {
	backend, kind, source, command, user *string
	env                                  envFlag
	memoryMiB                            *int64
	diskMiB                              *int64
	processes, openFiles                 *int
	noNetwork                            *bool
}

// envFlag gathers --env NAME=value, repeated.
type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		return errors.New("--env takes NAME=value")
	}
	e[k] = val
	return nil
}

func templateFlags(fs *flag.FlagSet) any {
	o := &templateOpts{backend: fs.String("backend", "local", "the backend's ID"), kind: fs.String("kind", "linux", "the kind of box"),
		source:  fs.String("source", "", "a folder's name in the templates folder, a template VMID, or an image"),
		command: fs.String("command", "", "the box's process"), user: fs.String("user", "", "the unprivileged user it runs as (boxsnap-box)"),
		env: envFlag{}, memoryMiB: fs.Int64("memory-mib", 0, "its memory, MiB"), diskMiB: fs.Int64("disk-mib", 0, "its disk, MiB"), processes: fs.Int("processes", 0, "its processes"),
		openFiles: fs.Int("open-files", 0, "its open files"),
		noNetwork: fs.Bool("no-network", false, "its boxes have only their own loopback, no outside network")}
	fs.Var(o.env, "env", "NAME=value of its environment (repeat)")
	return o
}

// setTemplate is `snapshot template`: adds or replaces a box template.
func setTemplate(ctx context.Context, c *client, pos []string, o any, out io.Writer) error {
	opts := o.(*templateOpts)
	t := snapshots.BoxTemplate{Backend: *opts.backend, Kind: *opts.kind, Source: *opts.source, Command: *opts.command,
		User: *opts.user, Env: opts.env, NoNetwork: *opts.noNetwork}
	t.Limits.MemoryBytes, t.Limits.Processes, t.Limits.OpenFiles = *opts.memoryMiB<<20, *opts.processes, *opts.openFiles
	t.Limits.DiskBytes = *opts.diskMiB << 20
	if err := c.do(ctx, "PUT", "/templates/"+seg(pos[0]), t, nil); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, snapshots.TemplateSavedWords(pos[0]))
	return err
}

// removeTemplate is `snapshot template-remove`; its boxes stay.
func removeTemplate(ctx context.Context, c *client, pos []string, _ any, out io.Writer) error {
	if err := c.do(ctx, "DELETE", "/templates/"+seg(pos[0]), nil, nil); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, snapshots.TemplateRemovedWords(pos[0]))
	return err
}

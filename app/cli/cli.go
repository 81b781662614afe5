package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/boxsnap/boxsnap/app/config"
)

// Usage is the CLI's help.
const Usage = `boxsnap snapshot: the owner's snapshots, through a running boxsnap server.

Usage:
  boxsnap snapshot take <box> [--name <name>] [--note <text>] [--memory]
  boxsnap snapshot list [<box>] [--kept] [--automatic | --saved] [--json]
  boxsnap snapshot delete <box> <snapshot> [--dry-run]
  boxsnap snapshot restore <box> <snapshot> --replace [--no-undo] [--force] [--dry-run]
  boxsnap snapshot fork <box> <snapshot> [--as-machine] [--name <name>] [--count <n>] [--check]
  boxsnap snapshot keep <box> <snapshot> [--days <n> | --until <date>]
  boxsnap snapshot unkeep <box> <snapshot>
  boxsnap snapshot save <box> <snapshot> [--name <name>]
  boxsnap snapshot unsave <box> <snapshot>
  boxsnap snapshot history <box> [--automatic on|off|backend] [--max-gib <n>|default]
  boxsnap snapshot delete-history <box> --confirm <box>
  boxsnap snapshot rename <box> <snapshot> <name>
  boxsnap snapshot note <box> <snapshot> <text>
  boxsnap snapshot export <box> <snapshot>... -o <file> [--base <snapshot>]
  boxsnap snapshot import <file>...
  boxsnap snapshot share <box> <snapshot> [--days <n>]
  boxsnap snapshot shares
  boxsnap snapshot unshare <share>
  boxsnap snapshot redeem <code> [--from <server>]
  boxsnap snapshot files <box> <snapshot> [<path>] [--json]
  boxsnap snapshot download <box> <snapshot> [<path>] -o <file>
  boxsnap snapshot diff <box> <snapshot> [<path>] [--against <snapshot>] [--all] [--json]

boxsnap takes automatic snapshots of a running box that changed (list
--automatic lists them); save makes one an ordinary snapshot, counted in
the box's limit and never thinned, and unsave makes one automatic again.
history says whether a box takes them and sets it; delete-history deletes
every automatic snapshot of a box, once --confirm names the box again.

fork makes a new box from the snapshot, in the box's thread, or with
--as-machine as one of your machines; --count makes that many from the
one snapshot, each its own box (<name>-1 … <name>-N), and prints each;
--check only says whether it can be forked, and changes nothing.

export writes one file of a box's snapshots (with --base, leaving out what
that snapshot holds: the receiver must hold it); import takes export files
in any order and imports all or nothing. share prints a code, once, for a
copy of the snapshot without its secrets; redeem makes a new box from a
code's copy, with --from when another boxsnap made the code.

files lists a folder of a snapshot (the top when no path is given), links
as links, never followed; download writes a file, or a folder as a tar.gz
(-o - writes to the standard output); diff lists what was added, removed
and changed since the snapshot, in the box now or in another snapshot
(--against), or with a path, that text file's unified diff. Paths are
inside the box's folder.

A snapshot is named by its name or its ID. Every command takes
--server <address> (or BOXSNAP_SERVER; default http://127.0.0.1:8080).
The token is your personal API token, from BOXSNAP_TOKEN or the file
BOXSNAP_TOKEN_FILE names; make one in Settings, API tokens.
`

// Exit codes.
const (
	ExitOK      = 0
	ExitRefused = 1 // boxsnap refused, or the server could not be reached
	ExitUsage   = 2
)

// RequestTimeout bounds one command: a command that starts an operation
// waits for it, as long as the API's own wait (app/api.ToolWait) and a
// little more.
const RequestTimeout = 11 * time.Minute

// Env is what the CLI takes from outside: the environment, and the HTTP
// client (tests give the httptest server's).
type Env struct {
	Getenv func(string) string
	HTTP   *http.Client
}

// Run runs `boxsnap snapshot <args>` and returns its exit code. It prints
// answers on stdout and refusals on stderr, never the token.
func Run(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	return runGroup(ctx, "boxsnap snapshot", Usage, commands(), args, env, stdout, stderr)
}

// RunBox runs `boxsnap box <args>`, the owner's boxes, as Run does.
func RunBox(ctx context.Context, args []string, env Env, stdout, stderr io.Writer) int {
	return runGroup(ctx, "boxsnap box", BoxUsage, boxCommands(), args, env, stdout, stderr)
}

// runGroup runs one command of a group (group is "boxsnap snapshot" or
// "boxsnap box").
func runGroup(ctx context.Context, group, usage string, cmds map[string]command, args []string, env Env, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" {
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "%s: there is no command %q.\n\n%s", group, name, usage)
		return ExitUsage
	}
	fs := flag.NewFlagSet(group+" "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", "", "the server's address (BOXSNAP_SERVER)")
	opts := cmd.flags(fs)
	pos, err := parse(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "Usage: %s\n", cmd.usage)
		return ExitOK
	}
	if err == nil && (len(pos) < cmd.min || len(pos) > cmd.max) {
		err = fmt.Errorf("it takes %s", cmd.args)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v.\nUsage: %s\n", group, name, strings.TrimSuffix(err.Error(), "."), cmd.usage)
		return ExitUsage
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	cfg, _, cerr := config.Load(group, nil, getenv, io.Discard)
	if *server != "" {
		cfg.ServerURL = *server
	}
	if cfg.Token == "" {
		why := "set BOXSNAP_TOKEN or BOXSNAP_TOKEN_FILE to your personal API token (Settings, API tokens)"
		if cerr != nil {
			why = cerr.Error()
		}
		fmt.Fprintf(stderr, "%s %s: no token: %s.\n", group, name, why)
		return ExitUsage
	}
	hc := env.HTTP
	if hc == nil {
		hc = &http.Client{}
	}
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	c := &client{base: trimURL(cfg.ServerURL), token: cfg.Token, http: hc}
	if err := cmd.run(ctx, c, pos, opts, stdout); err != nil {
		fmt.Fprintf(stderr, "%s %s: %s\n", group, name, err.Error())
		return ExitRefused
	}
	return ExitOK
}

// parse reads flags anywhere among the arguments: "take amber-fox --name x"
// as well as "take --name x amber-fox".
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// command is one subcommand: its words, how many arguments it takes, its
// flags and what it does.
type command struct {
	usage    string
	args     string
	min, max int
	flags    func(*flag.FlagSet) any
	run      func(ctx context.Context, c *client, pos []string, opts any, out io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"take":            {usage: "boxsnap snapshot take <box> [--name <name>] [--note <text>] [--memory]", args: "a box", min: 1, max: 1, flags: takeFlags, run: take},
		"list":            {usage: "boxsnap snapshot list [<box>] [--kept] [--automatic | --saved] [--json]", args: "at most a box", min: 0, max: 1, flags: listFlags, run: list},
		"delete":          {usage: "boxsnap snapshot delete <box> <snapshot> [--dry-run]", args: "a box and a snapshot", min: 2, max: 2, flags: deleteFlags, run: deleteSnapshot},
		"restore":         {usage: "boxsnap snapshot restore <box> <snapshot> --replace [--no-undo] [--force] [--dry-run]", args: "a box and a snapshot", min: 2, max: 2, flags: restoreFlags, run: restore},
		"fork":            {usage: "boxsnap snapshot fork <box> <snapshot> [--as-machine] [--name <name>] [--count <n>] [--check]", args: "a box and a snapshot", min: 2, max: 2, flags: forkFlags, run: fork},
		"keep":            {usage: "boxsnap snapshot keep <box> <snapshot> [--days <n> | --until <date>]", args: "a box and a snapshot", min: 2, max: 2, flags: keepFlags, run: keep},
		"renew":           {usage: "boxsnap snapshot renew <box> <snapshot>", args: "a box and a kept snapshot", min: 2, max: 2, flags: noFlags, run: renew},
		"unkeep":          {usage: "boxsnap snapshot unkeep <box> <snapshot>", args: "a box and a snapshot", min: 2, max: 2, flags: noFlags, run: unkeep},
		"save":            {usage: "boxsnap snapshot save <box> <snapshot> [--name <name>]", args: "a box and a snapshot", min: 2, max: 2, flags: saveFlags, run: save},
		"head":            {usage: "boxsnap snapshot head <box> [<snapshot>]", args: "a box and at most a snapshot", min: 1, max: 2, flags: noFlags, run: head},
		"unsave":          {usage: "boxsnap snapshot unsave <box> <snapshot>", args: "a box and a snapshot", min: 2, max: 2, flags: noFlags, run: unsave},
		"history":         {usage: "boxsnap snapshot history <box> [--automatic on|off|backend] [--max-gib <n>|default]", args: "a box", min: 1, max: 1, flags: historyFlags, run: history},
		"delete-history":  {usage: "boxsnap snapshot delete-history <box> --confirm <box>", args: "a box", min: 1, max: 1, flags: deleteHistoryFlags, run: deleteHistory},
		"rename":          {usage: "boxsnap snapshot rename <box> <snapshot> <name>", args: "a box, a snapshot and its new name", min: 3, max: 3, flags: noFlags, run: rename},
		"note":            {usage: "boxsnap snapshot note <box> <snapshot> <text>", args: "a box, a snapshot and the note's text (\"\" clears it)", min: 3, max: 3, flags: noFlags, run: note},
		"export":          {usage: "boxsnap snapshot export <box> <snapshot>... -o <file> [--base <snapshot>]", args: "a box and its snapshots", min: 2, max: 101, flags: exportFlags, run: export},
		"import":          {usage: "boxsnap snapshot import <file>...", args: "export files", min: 1, max: 100, flags: noFlags, run: importFiles},
		"share":           {usage: "boxsnap snapshot share <box> <snapshot> [--days <n>]", args: "a box and a snapshot", min: 2, max: 2, flags: shareFlags, run: share},
		"shares":          {usage: "boxsnap snapshot shares", args: "nothing", min: 0, max: 0, flags: noFlags, run: shares},
		"unshare":         {usage: "boxsnap snapshot unshare <share>", args: "a share's ID", min: 1, max: 1, flags: noFlags, run: unshare},
		"redeem":          {usage: "boxsnap snapshot redeem <code> [--from <server>]", args: "a share code", min: 1, max: 1, flags: redeemFlags, run: redeem},
		"files":           {usage: "boxsnap snapshot files <box> <snapshot> [<path>] [--json]", args: "a box, a snapshot and at most a path", min: 2, max: 3, flags: filesFlags, run: files},
		"download":        {usage: "boxsnap snapshot download <box> <snapshot> [<path>] -o <file>", args: "a box, a snapshot and at most a path", min: 2, max: 3, flags: downloadFlags, run: download},
		"diff":            {usage: "boxsnap snapshot diff <box> <snapshot> [<path>] [--against <snapshot>] [--all] [--json]", args: "a box, a snapshot and at most a path", min: 2, max: 3, flags: diffFlags, run: diff},
		"approvals":       {usage: "boxsnap snapshot approvals", args: "nothing", min: 0, max: 0, flags: noFlags, run: approvals},
		"approve":         {usage: "boxsnap snapshot approve <request>", args: "a request's ID", min: 1, max: 1, flags: noFlags, run: approve},
		"decline":         {usage: "boxsnap snapshot decline <request>", args: "a request's ID", min: 1, max: 1, flags: noFlags, run: decline},
		"forget":          {usage: "boxsnap snapshot forget <backend> [--check]", args: "a backend removed from settings", min: 1, max: 1, flags: forgetFlags, run: forget},
		"templates":       {usage: "boxsnap snapshot templates", args: "nothing", min: 0, max: 0, flags: noFlags, run: templates},
		"template":        {usage: "boxsnap snapshot template <name> [--backend <id>] [--kind <kind>] [--source <s>] [--command <c>] [--user <u>] [--env NAME=value]... [--memory-mib <n>] [--disk-mib <n>] [--processes <n>] [--open-files <n>]", args: "a template's name", min: 1, max: 1, flags: templateFlags, run: setTemplate},
		"template-remove": {usage: "boxsnap snapshot template-remove <name>", args: "a template's name", min: 1, max: 1, flags: noFlags, run: removeTemplate},
	}
}

func noFlags(*flag.FlagSet) any { return nil }

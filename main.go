// Command boxsnap keeps snapshots of boxes: VMs, containers and sandboxes
// that AI agents and people work in. This file holds its subcommands and
// nothing else; each calls into app/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/boxsnap/boxsnap/app/boot"
	"github.com/boxsnap/boxsnap/app/cli"
	"github.com/boxsnap/boxsnap/app/config"
	"github.com/boxsnap/boxsnap/app/demo"
	"github.com/boxsnap/boxsnap/app/logging"
	"github.com/boxsnap/boxsnap/providers/pvesim"
)

const usage = `boxsnap keeps snapshots of boxes.

Usage:
  boxsnap serve     the web app, the JSON API and the workers (--workers=false: no workers)
  boxsnap work      the workers alone
  boxsnap migrate   apply the app's and River's migrations
  boxsnap doctor    check the database, the migrations and each backend
  boxsnap pvesim    run the Proxmox VE API simulator (for tests and the demo)
  boxsnap snapshot  the owner's snapshots through a running server ("boxsnap snapshot help")
  boxsnap box       the owner's boxes through a running server ("boxsnap box help")
  boxsnap help      this text

Run "boxsnap <command> -h" for a command's flags. Every flag has an
environment variable; the README lists them.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "pvesim":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		if err := pvesim.Run(ctx, rest, stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "boxsnap pvesim: %v\n", err)
			return 1
		}
		return 0
	case "snapshot":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return cli.Run(ctx, rest, cli.Env{Getenv: os.Getenv}, stdout, stderr)
	case "box":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return cli.RunBox(ctx, rest, cli.Env{Getenv: os.Getenv}, stdout, stderr)
	case "demo-app":
		// The demo box's own process (make run's amber-fox), not a command
		// for people.
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		if err := demo.RunWebApp(ctx, rest, stderr); err != nil {
			fmt.Fprintf(stderr, "boxsnap demo-app: %v\n", err)
			return 1
		}
		return 0
	case "serve", "work", "migrate", "doctor":
	default:
		fmt.Fprintf(stderr, "boxsnap: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	cfg, _, err := config.Load("boxsnap "+cmd, rest, os.Getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "boxsnap %s: %v\n", cmd, err)
		return 2
	}
	logger := logging.New(stderr, cfg.LogFormat, cfg.LogLevel)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	switch cmd {
	case "serve":
		err = boot.Serve(ctx, cfg, logger, stdout, boot.Options{})
	case "work":
		err = boot.Work(ctx, cfg, logger, boot.Options{})
	case "migrate":
		err = boot.Migrate(ctx, cfg, logger)
	case "doctor":
		if !boot.Doctor(ctx, cfg, logger, stdout) {
			return 1
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "boxsnap %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/approvals"
	"github.com/boxsnap/boxsnap/app/snapshots/boxes"
	"github.com/boxsnap/boxsnap/app/snapshots/fork"
	"github.com/boxsnap/boxsnap/app/snapshots/take"
)

// State is one page or dialog state of the screenshot run: where to go and
// what to do there. The screenshot run saves each at every width and
// scheme, and TestLayoutEveryState checks each one's layout and runs
// axe-core on it, so a state added here is both pictured and checked.
type State struct {
	Name string
	Path string
	Do   func(p playwright.Page) error
}

// Scene is the demo with what the states need beyond Seed: a box whose
// restore waits at its stop, a take queued behind it, a fork starting, and
// presence on amber-fox.
type Scene struct {
	Demo *Demo
	// SlowTarget is hazel-heron's snapshot its waiting restore goes to.
	SlowTarget string
	// ForkOp is the operation of hazel-heron-fork, starting.
	ForkOp string
	// Undo is brisk-lake's undo.
	Undo string
	// RestoreOp is brisk-lake's restore, done.
	RestoreOp string
	// Automatic is amber-fox's newest automatic snapshot.
	Automatic string
	// Request is the agent's restore of sage-wren, waiting for the
	// person's word.
	Request string
}

// SetScene seeds the demo and the busy boxes the states show. The stack's
// StopTimeout should be long (minutes): hazel-heron's restore waits at its
// stop that long.
func (s *Stack) SetScene(ctx context.Context) (*Scene, error) {
	demo, err := s.Seed(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo data: %w", err)
	}
	sc := &Scene{Demo: demo}
	// Each step seeds a part of the scene, in this order: hazel-heron's
	// restore holds its box's turn before the others are seeded.
	for _, step := range []func(context.Context, *Scene) error{s.sceneSlowBox, s.sceneAmberFoxChanged, s.sceneTawnyStopped,
		s.sceneAmberFoxHistory, s.sceneOliveInTrash, s.sceneTawnyCleanup, s.sceneSageWrenAsks, s.sceneBriskUndo} {
		if err := step(ctx, sc); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// sceneSlowBox seeds hazel-heron, whose restore waits at its stop, with a take and a
// fork queued behind it.
func (s *Stack) sceneSlowBox(ctx context.Context, sc *Scene) error {
	// A box whose restore waits at its stop, and a take queued behind it:
	// restoring, and a take in progress.
	slow, err := s.SlowBox(ctx, "hazel-heron")
	if err != nil {
		return err
	}
	if _, err := s.Take(ctx, snapshots.Owner(), slow.Name, "before the upgrade", ""); err != nil {
		return err
	}
	if err := s.WriteFile(slow, "data.txt", "changed\n"); err != nil {
		return err
	}
	list, err := s.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: slow.Name})
	if err != nil {
		return err
	}
	sc.SlowTarget = list[0].Snapshots[0].ID
	if _, err := s.Restores.Restore(ctx, snapshots.Owner(), snapshots.RestoreRequest{Box: slow.Name, Snapshot: sc.SlowTarget}); err != nil {
		return err
	}
	if _, _, err := s.Taker.Take(ctx, snapshots.Owner(), take.TakeRequest{Box: slow.Name, Name: "after the upgrade"}); err != nil {
		return err
	}
	// A fork of hazel-heron waits behind its restore: a fork starting.
	forkOp, err := s.Forks.Fork(ctx, snapshots.Owner(), fork.ForkRequest{Box: slow.Name, Snapshot: sc.SlowTarget, Name: "hazel-heron-fork"})
	if err != nil {
		return fmt.Errorf("fork hazel-heron: %w", err)
	}
	sc.ForkOp = forkOp.ID
	return nil
}

// sceneAmberFoxChanged changes amber-fox since its migration's snapshot and puts
// threads and the person on it.
func (s *Stack) sceneAmberFoxChanged(ctx context.Context, sc *Scene) error {
	// amber-fox changed since its migration's snapshot: the restore dialog
	// says so, and Compare lists it.
	if err := s.WriteFile(sc.Demo.AmberFox, "app/db/schema.sql", "create table users (id int, email text);\ncreate index users_email on users (email);\n"); err != nil {
		return err
	}
	if err := s.WriteFile(sc.Demo.AmberFox, "app/notes.txt", "Schema v2: email on users.\n"); err != nil {
		return err
	}
	// Presence on amber-fox: the restore dialog names what goes. Threads'
	// workspaces on amber-fox make it a box threads run on, whose restores
	// are off unless Settings turns them on: on here, so the restore dialog
	// names what goes.
	{
		st, err := s.Core.Settings(ctx)
		if err != nil {
			return err
		}
		st.ExecutionMachineRestores = true
		if err := s.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
			return err
		}
	}
	if _, err := s.Boxes.SetPresence(ctx, snapshots.Owner(), "amber-fox", snapshots.Presence{
		Workspaces: []snapshots.Workspace{{Thread: sc.Demo.Thread.ID, Working: true}, {Thread: sc.Demo.Guide.ID}},
		Desktop:    "you", Terminals: 1}); err != nil {
		return err
	}
	return nil
}

// sceneTawnyStopped seeds tawny-moss and its release stopped at a kept snapshot's
// held copy.
func (s *Stack) sceneTawnyStopped(ctx context.Context, sc *Scene) error {
	// tawny-moss's last release stopped at its kept snapshot's held copy,
	// as with a full storage on Proxmox: the release page says why, with
	// Release again and Release and delete it. The local backend keeps
	// snapshots as they are and never stops there, so the stopped release
	// is recorded as the core records one (CopyFailedWords).
	tawny, err := s.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "tawny-moss", Backend: "local"})
	if err != nil {
		return err
	}
	thu, err := s.Take(ctx, snapshots.Owner(), tawny.Name, "Thu 09:15", "")
	if err != nil {
		return err
	}
	kop, err := s.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: tawny.Name, Snapshot: thu.ID, Days: 30})
	if err != nil {
		return err
	}
	if _, err := s.Wait(ctx, kop); err != nil {
		return err
	}
	if _, err := s.Pool.Exec(ctx, `INSERT INTO operations (id, kind, box_id, by_kind, step, state, error, observed, started_at, ended_at)
		VALUES ($1, 'release', $2, 'owner', 'copy-clone', 'failed', $3, 'nothing kept was deleted', now(), now())`,
		snapshots.NewID("op"), tawny.ID, boxes.CopyFailedWords(thu.Name, "this host has 5.4 GB free, and it needs 8.6 GB")); err != nil {
		return fmt.Errorf("a stopped release of tawny-moss: %w", err)
	}
	return nil
}

// sceneAmberFoxHistory takes amber-fox's automatic history.
func (s *Stack) sceneAmberFoxHistory(ctx context.Context, sc *Scene) error {
	// amber-fox's automatic history: three changes, each an automatic
	// snapshot with its picture, for the timeline, Save and Delete history.
	for i, text := range []string{"one", "two", "three"} {
		if err := s.WriteFile(sc.Demo.AmberFox, "app/session.log", text+"\n"); err != nil {
			return err
		}
		op, sn, err := s.Taker.TakeAutomatic(ctx, sc.Demo.AmberFox.ID, "the box changed")
		if err != nil {
			return fmt.Errorf("amber-fox's automatic snapshot %d: %w", i, err)
		}
		if _, err := s.Wait(ctx, op); err != nil {
			return err
		}
		sc.Automatic = sn.ID
	}
	return nil
}

// sceneOliveInTrash releases olive-pine into the trash.
func (s *Stack) sceneOliveInTrash(ctx context.Context, sc *Scene) error {
	// olive-pine was released: it waits in the trash with its final
	// snapshot (the Trash tab, its page, Empty now).
	olive, err := s.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "olive-pine", Backend: "local", Thread: sc.Demo.Thread.ID})
	if err != nil {
		return err
	}
	if err := s.WriteFile(olive, "notes.txt", "a draft\n"); err != nil {
		return err
	}
	rop, err := s.Boxes.ReleaseBox(ctx, snapshots.Owner(), olive.Name, "")
	if err != nil {
		return err
	}
	if _, err := s.Wait(ctx, rop); err != nil {
		return err
	}
	return nil
}

// sceneTawnyCleanup keeps tawny-moss's "before the cleanup" until tomorrow.
func (s *Stack) sceneTawnyCleanup(ctx context.Context, sc *Scene) error {
	// tawny-moss's "before the cleanup", kept until tomorrow: its row says
	// it goes, with Keep 30 more days beside it.
	cleanup, err := s.Take(ctx, snapshots.Owner(), "tawny-moss", "before the cleanup", "")
	if err != nil {
		return err
	}
	tomorrow := time.Now().UTC().AddDate(0, 0, 1)
	kop, err := s.Keeps.Keep(ctx, snapshots.Owner(), snapshots.KeepRequest{Box: "tawny-moss", Snapshot: cleanup.ID, Until: &tomorrow})
	if err != nil {
		return err
	}
	if _, err := s.Wait(ctx, kop); err != nil {
		return err
	}
	return nil
}

// sceneSageWrenAsks seeds sage-wren and its agent's restore waiting for the
// person's word.
func (s *Stack) sceneSageWrenAsks(ctx context.Context, sc *Scene) error {
	// sage-wren, a box of the demo's thread whose agent asked to restore
	// it while "Agents may restore their own boxes" was off.
	if _, err := s.Boxes.AcquireBox(ctx, snapshots.Owner(), snapshots.BoxRequest{Name: "sage-wren", Backend: "local", Thread: sc.Demo.Thread.ID}); err != nil {
		return err
	}
	agent := snapshots.Agent(sc.Demo.Thread.ID)
	wren, err := s.Take(ctx, agent, "sage-wren", "before the refactor", "")
	if err != nil {
		return err
	}
	st, err := s.Core.Settings(ctx)
	if err != nil {
		return err
	}
	st.AgentsMayRestore = false
	if err := s.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		return err
	}
	_, err = s.Restores.Restore(ctx, agent, snapshots.RestoreRequest{Box: "sage-wren", Snapshot: wren.ID, Replace: true})
	asked, ok := approvals.AsAsked(err)
	if !ok {
		return fmt.Errorf("sage-wren's request: %v", err)
	}
	sc.Request = asked.Approval.ID
	st.AgentsMayRestore = true
	if err := s.Core.SaveSettings(ctx, snapshots.Owner(), st); err != nil {
		return err
	}
	return nil
}

// sceneBriskUndo reads brisk-lake's undo and the restore that took it.
func (s *Stack) sceneBriskUndo(ctx context.Context, sc *Scene) error {
	brisk, err := s.Core.List(ctx, snapshots.Owner(), snapshots.ListQuery{Box: "brisk-lake"})
	if err != nil {
		return err
	}
	for _, sn := range brisk[0].Snapshots {
		if sn.IsUndo() {
			sc.Undo = sn.ID
			sc.RestoreOp = *sn.UndoOf
		}
	}
	return nil
}

// States is every page and dialog state, in the screenshot run's order.
// Add a state here (not in the screenshot run) so the layout test covers
// it too; a state's Do leaves the page as it should be pictured.
func (sc *Scene) States() []State {
	return append(sc.boxStates(), sc.otherStates()...)
}

// click is a state's Do that clicks the first element sel finds.
func click(sel string) func(p playwright.Page) error {
	return func(p playwright.Page) error { return p.Locator(sel).First().Click() }
}

// dialog is a state's Do that clicks the first element sel finds and
// waits for the dialog it opens.
func dialog(sel string) func(p playwright.Page) error {
	return func(p playwright.Page) error {
		if err := p.Locator(sel).First().Click(); err != nil {
			return err
		}
		return p.Locator("#dialog-host dialog[open]").WaitFor()
	}
}

// boxStates are the Snapshots tab's, the box pages' and their dialogs'
// states, up to a share code shown.
func (sc *Scene) boxStates() []State {
	mig := sc.Demo.Migration.ID
	return []State{
		{Name: "snapshots-tab", Path: "/boxes/snapshots"},
		{Name: "row-actions-on-hover", Path: "/boxes/snapshots", Do: func(p playwright.Page) error {
			return p.Locator("#snap-" + mig).Hover()
		}},
		{Name: "two-selected-and-their-delete", Path: "/boxes/snapshots?select=1", Do: func(p playwright.Page) error {
			for _, id := range []string{sc.SlowTarget, mig} {
				if err := p.Locator("#snap-" + id + " input.pick").Check(); err != nil {
					return err
				}
			}
			if err := p.Locator("button[value=delete]").Click(); err != nil {
				return err
			}
			return p.Locator("dialog").WaitFor()
		}},
		{Name: "agents-only", Path: "/boxes/snapshots?by=agents"},
		{Name: "desktop-box-page", Path: "/boxes/amber-fox"},
		{Name: "picture-popover", Path: "/boxes/amber-fox", Do: func(p playwright.Page) error {
			// A picture is taken within 2 s or not at all: on a loaded
			// machine a row may have none, and shows its place.
			if n, err := p.Locator("button.pic").Count(); err != nil || n == 0 {
				return err
			}
			if err := p.Locator("button.pic").First().Click(); err != nil {
				return err
			}
			return p.Locator(".picpop:popover-open").WaitFor()
		}},
		{Name: "take-snapshot", Path: "/boxes/amber-fox", Do: dialog("#snapshots-card a.button")},
		{Name: "take-in-progress-and-restoring", Path: "/boxes/hazel-heron"},
		{Name: "restore-dialog-naming-what-goes", Path: "/boxes/amber-fox", Do: dialog("#snap-" + mig + " a[data-dialog]")},
		// Not amber-fox: a box threads run on is never restored without an
		// undo, and its dialog locks the undo ticked.
		{Name: "restore-without-undo", Path: "/boxes/brisk-lake", Do: func(p playwright.Page) error {
			if err := dialog("#snapshots-card li.snap a[data-dialog][href*=restore]")(p); err != nil {
				return err
			}
			return p.Locator("dialog input[name=undo]").Uncheck()
		}},
		{Name: "fork", Path: "/boxes/amber-fox", Do: func(p playwright.Page) error {
			// Beside Restore on a wide window; in the menu at 390 px.
			if v, _ := p.Locator("#fork-" + mig).IsVisible(); v {
				return dialog("#fork-" + mig)(p)
			}
			if err := p.Locator("#snap-" + mig + " summary").Click(); err != nil {
				return err
			}
			return dialog("#snap-" + mig + " .items a.narrow-only")(p)
		}},
		{Name: "a-fork-starting", Path: "/boxes/hazel-heron-fork?fork=" + sc.ForkOp},
		{Name: "notice-with-undo", Path: "/boxes/brisk-lake"},
		{Name: "undo-dialog", Path: "/boxes/brisk-lake", Do: dialog(".notice a.button")},
		{Name: "row-menu", Path: "/boxes/amber-fox", Do: click("#snap-" + mig + " summary")},
		{Name: "look-browse-files", Path: "/boxes/amber-fox/snapshots/" + mig + "/files?path=app"},
		{Name: "look-a-file-shown", Path: "/boxes/amber-fox/snapshots/" + mig + "/file?path=app%2Fdb%2Fschema.sql"},
		{Name: "look-compare-list", Path: "/boxes/amber-fox/snapshots/" + mig + "/compare"},
		{Name: "look-a-diff", Path: "/boxes/amber-fox/snapshots/" + mig + "/diff?path=app%2Fdb%2Fschema.sql"},
		{Name: "keep-and-its-cost", Path: "/boxes/amber-fox/snapshots/" + mig + "/keep"},
		{Name: "delete-dialog", Path: "/boxes/brisk-lake/snapshots/" + sc.Undo + "/delete"},
		{Name: "released-box-kept", Path: "/boxes/snapshots?kept=1"},
		{Name: "release-stopped", Path: "/boxes/tawny-moss/release"},
		{Name: "release-keep-first", Path: "/boxes/amber-fox/release"},
		{Name: "trash-tab", Path: "/boxes/trash"},
		{Name: "trashed-box-page", Path: "/boxes/olive-pine"},
		{Name: "trash-empty-dialog", Path: "/boxes/olive-pine/trash/empty"},
		{Name: "reset-dialog", Path: "/boxes/amber-fox", Do: dialog("#reset")},
		{Name: "box-with-none", Path: "/boxes/dusky-dune"},
		{Name: "export-dialog", Path: "/boxes/amber-fox", Do: func(p playwright.Page) error {
			if err := p.Locator("#snap-" + mig + " summary").Click(); err != nil {
				return err
			}
			return dialog("#snap-" + mig + " .items a[href*='/export']")(p)
		}},
		{Name: "share-code-shown", Path: "/boxes/amber-fox", Do: func(p playwright.Page) error {
			if err := revokeShareCodes(p); err != nil {
				return err
			}
			if err := p.Locator("#snap-" + mig + " summary").Click(); err != nil {
				return err
			}
			if err := dialog("#snap-" + mig + " .items a[href*='/share']")(p); err != nil {
				return err
			}
			if err := p.Locator("dialog[open] button[type=submit]").Click(); err != nil {
				return err
			}
			return p.Locator("#share-code").WaitFor()
		}},
	}
}

// otherStates are the Import page's, the settings', the requests', the
// Machines and Threads tabs', the timeline's and a toast's states.
func (sc *Scene) otherStates() []State {
	mig := sc.Demo.Migration.ID
	return []State{
		{Name: "import-page", Path: "/import"},
		{Name: "snapshots-settings", Path: "/settings/snapshots"},
		{Name: "settings-each-box", Path: "/settings/snapshots/each-box"},
		{Name: "settings-agents", Path: "/settings/snapshots/agents"},
		{Name: "settings-paid", Path: "/settings/snapshots/paid"},
		{Name: "settings-backends", Path: "/settings/snapshots/backends"},
		{Name: "settings-hosts", Path: "/settings/hosts"},
		{Name: "requests-page", Path: "/approvals"},
		{Name: "box-page-with-a-request", Path: "/boxes/sage-wren"},
		{Name: "keep-30-more-days", Path: "/boxes/tawny-moss"},
		{Name: "machines-tab", Path: "/boxes"},
		{Name: "threads-tab", Path: "/boxes/threads"},
		{Name: "select-with-ticks", Path: "/boxes/snapshots?select=1", Do: func(p playwright.Page) error {
			for _, id := range []string{sc.SlowTarget, mig} {
				if err := p.Locator("#snap-" + id + " label.pickbox").Click(); err != nil {
					return err
				}
			}
			return p.Locator("#picked-count", playwright.PageLocatorOptions{HasText: "2 ticked"}).WaitFor()
		}},
		{Name: "now-row-and-history", Path: "/boxes/brisk-lake#history"},
		{Name: "timeline", Path: "/boxes/amber-fox#timeline"},
		{Name: "save-dialog", Path: "/boxes/amber-fox#timeline", Do: func(p playwright.Page) error {
			if err := click("#snap-" + sc.Automatic + " summary")(p); err != nil {
				return err
			}
			return dialog("#snap-" + sc.Automatic + " a[href*='/save']")(p)
		}},
		{Name: "delete-history-dialog", Path: "/boxes/amber-fox/history/delete"},
		{Name: "toast", Path: "/boxes/threads", Do: func(p playwright.Page) error {
			// brisk-lake's restore, started by the person, ended while
			// they were elsewhere.
			u, err := url.Parse(p.URL())
			if err != nil {
				return err
			}
			if err := p.Context().AddCookies([]playwright.OptionalCookie{{Name: "boxsnap_watch", Value: sc.RestoreOp, URL: playwright.String(u.Scheme + "://" + u.Host + "/")}}); err != nil {
				return err
			}
			if _, err := p.Reload(); err != nil {
				return err
			}
			return p.Locator(".toast").WaitFor()
		}},
	}
}

// revokeShareCodes revokes every live share code from the Import page, then
// goes back to the page p showed. The share code's state makes a code each
// time it is drawn (at each width and in each mode), and an install holds
// only contents.MaxLiveShares live codes at once.
func revokeShareCodes(p playwright.Page) error {
	back, err := url.Parse(p.URL())
	if err != nil {
		return err
	}
	imp := *back
	imp.Path, imp.RawQuery = "/import", ""
	if _, err := p.Goto(imp.String()); err != nil {
		return err
	}
	revoke := p.Locator("button[aria-label^='Revoke the code']")
	for {
		n, err := revoke.Count()
		if err != nil || n == 0 {
			if err == nil {
				_, err = p.Goto(back.String())
			}
			return err
		}
		if err := revoke.First().Click(); err != nil {
			return err
		}
		if err := playwright.NewPlaywrightAssertions().Locator(revoke).ToHaveCount(n - 1); err != nil {
			return fmt.Errorf("revoke a share code: %w", err)
		}
	}
}

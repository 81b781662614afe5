// Package boxes is the boxes and threads: acquiring a box (from a box
// template, a backend's source or an adopted guest) and listing the boxes
// a caller may see, the Machines tab's pages of them, a box's presence,
// status and log, its automatic history's settings, threads and their
// tokens, box templates, the trash (a release into it, a restore from it,
// emptying it), a box's release with the held copies of its kept
// snapshots, and forgetting a backend no longer in settings. Its Release
// and Untrash operations are registered with the kernel's engine by New.
//
// Boxes holds only what it uses: the store, the clock and the logger;
// what it needs of the core (the backends, the record reads and locks, the
// guard, admission and an operation's steps and end, the box log, and the
// snapshot operations a release and a restore from the trash run) it
// reaches through its kernel interface, which *snapshots.Service
// satisfies. The kernel reads boxes and templates through
// snapshots.BoxReader, which app/boot gives it (Kernel.UseBoxes). Threads,
// templates, forgetting a backend and history's settings are types of
// their own (ThreadKeeper, TemplateKeeper, Forgetting, HistorySettings,
// seam.go) that Boxes embeds, each with the fields it uses. words.go
// holds the words it alone says.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/).
package boxes

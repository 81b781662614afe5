// Package plans is what a call that deletes or overwrites would do, said
// before it is made and changing nothing: the dry runs of a delete, a
// reset, a restore, an undo, a box's release and an emptying of the trash
// (the agent tools' dry_run, the REST routes' ?dry_run=true, the CLI's
// --dry-run), and the words the person's Delete, Reset and Release dialogs
// say of the same plans, from this one home.
//
// A dry run runs every check the real call runs, through the core's own
// checks where they exist (RestoreDryRun, ResetCheck, package boxes'
// ReleaseChecks), and refuses as the real call would; it records no
// operation, queues no job, pins nothing and writes no file. Plans holds
// only what it uses: the core, reached through its kernel interface, which
// *snapshots.Service satisfies; the restore's and the reset's own checks,
// reached through the restores and resets interfaces, which package
// restore's Restores and Resets satisfy; the release's checks, reached
// through the releases interface, which package boxes' ReleaseChecks
// satisfies (UseReleases); and the clock; app/api makes it from the core,
// the restores and the boxes.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor a seam of the core other than package restore, whose
// requests and answers its dry runs carry.
package plans

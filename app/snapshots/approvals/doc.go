// Package approvals is the requests for the person's word. Where an agent
// must ask before it restores (on a box threads run on, or on its own box
// when Settings turns "Agents may restore their own boxes" off), the
// core's restore records a request bound to the plan it showed
// (AskRestore) and answers at once that it asked (Asked); the person reads,
// lists, approves or declines it on the pages, the API or the CLI. An
// approval runs the restore as the asking agent's, with the person's yes
// on its operation; a plan that changed since refuses and shows the new
// one, at most MaxAsks times; a request expires after the setting's
// minutes. The agent is told each answer once, on its next call (News),
// and while a request for a box its thread has a workspace on waits, or its
// restore runs, the thread's turns are held (TurnHeld; AgentCall reads
// both with the thread in one statement). A request is polled as its
// asking thread sees it (Asking; another thread's reads as a made-up ID),
// and waited on until it is answered (Await).
//
// Approvals holds only what it uses: the store, the engine whose
// operations an approved request started, the clock and the logger; what
// it needs of the core (the box log, the time zone, the records) it
// reaches through its kernel interface, which *snapshots.Service
// satisfies, and the guard and the restore through its restorer interface
// (package restore's Restores, Options.Restores); app/boot gives the
// restore this package through restore.Restores.UseApprovals. words.go
// holds the words it alone says.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/).
package approvals

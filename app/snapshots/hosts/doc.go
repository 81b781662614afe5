// Package hosts holds the hosts boxsnap runs on and what a person does
// with them: each process records its host and keeps it seen while it
// lives (Seen, Beat), a box whose data is on one host's disk is owned by
// that host (the database records it when the box is made), a person
// moves such a box to another host (Move) and, once a host is gone for
// good (MarkGone), takes its boxes over on another host (TakeOver).
//
// Which host runs a box's operations is the operation engine's (a River
// queue per host, app/operations HostQueue); this package only changes the
// owner, in the transaction that admits the restore carrying the box over
// from its last snapshot onto the new host and moves the jobs still
// waiting in the old host's queue, so a process killed part-way leaves
// the box with its old host and the same move or takeover carries it
// over when asked again. A takeover first ends, in words, the operations
// the gone host left on each box it carries (endLeftOps), which no live
// host would ever run, so the restore never waits behind them. The host a
// box left releases its copy there once another host owns the box
// (ReleaseLeft, run by its own work and by a working process's start):
// its folder, state and process, never a snapshot; a copy of a box
// released meanwhile is kept, found, its process stopped (keepFound,
// through Found), never deleted. The carrying restore
// needs the snapshot's content reachable from the new host: a backend
// says so through
// providers.SharedContent (the local backend with a content store), and a
// move or a takeover is refused in words where it is not. The box's guest
// is made on the new host first, running as the box ran when that
// snapshot was taken (providers.Carried: its command, user, limits and
// network, and whether it ran, so the restore starts it), with the
// environment the database recorded when the box (or the box it was
// forked from) was made or reset (carriedRun), which no snapshot keeps,
// and never its published ports, which could collide there. A fork of one
// of its snapshots asked on another host runs with that environment too
// (CarriedEnv, which the fork reaches through app/snapshots/seams).
// A snapshot taken before the content store was set is on its host alone:
// each host's own work ships them (Backfill, run on its queue by the
// jobs' fan-out over Working, the hosts whose workers beat lately; a host
// whose queue holds work no live worker runs is Stranded in words), a
// move from such a snapshot is refused in words, and Backlog says how
// many wait. A host that does not hold a
// snapshot asks the database's record before fetching it (MayFetch), so a
// deleted one stays deleted on every host.
//
// Only the person moves boxes and takes hosts over: an agent's box lives
// where the person put it, and a move puts its data on another machine,
// outside anything one thread decides; so no agent tool or MCP tool does
// either. words.go holds the words this package alone says.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor another seam of the core (a package under
// app/snapshots/, or app/pictures): the restore it starts it reaches
// through its own small interface.
package hosts

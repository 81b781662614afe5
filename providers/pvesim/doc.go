// Package pvesim is boxsnap's simulator of the Proxmox VE HTTP API
// (/api2/json), the subset a snapshot manager uses: API tokens, tickets and
// per-path privileges; nodes, guests (LXC and QEMU), their config and power;
// snapshots with Proxmox's locks, snapstate and per-storage rollback rules;
// clone and template; UPIDs and task lists; storage status. It serves HTTPS
// only, with a certificate made in memory at start, and is labelled a
// simulator wherever it shows (GET /version, the control API, its logs).
//
// Behaviour follows /work/shared/proxmox-api.md, which was read from
// Proxmox's own source; each handler cites the Proxmox file and function it
// copies. Abbreviations in those comments: PC pve-container, QS qemu-server,
// PS pve-storage, GC pve-guest-common, PM pve-manager, CO pve-common, AC
// pve-access-control, HS pve-http-server.
//
// State lives in memory behind one mutex. Tasks need no goroutines: each has
// a due time on the simulator's clock and is finished, in due order, by the
// next call that looks at the state (an API request or a Go method), so a
// test that sets the clock sees the same result every time.
//
// The control API (faults, a node cut off, outside changes as an admin would
// make them, reboots, the clock) is off unless Config.Control is set; every
// fault is also a Go method on *Sim for in-process tests.
//
// pvesim must never import the boxsnap core (app/...), the store, jobs, the
// web app, or providers/proxmox: it stands where a real Proxmox VE would.
package pvesim

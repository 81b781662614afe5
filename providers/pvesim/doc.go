// Package pvesim is boxsnap's simulator of the Proxmox VE HTTP API
// (/api2/json), the subset a snapshot manager uses: API tokens, tickets and
// per-path privileges; nodes, guests (LXC and QEMU), their config and power;
// snapshots with Proxmox's locks, snapstate and per-storage rollback rules;
// clone, template and destroy; UPIDs and task lists; storage status. It
// serves HTTPS only (HTTP/1.1), with an ECDSA certificate made in memory at
// start, and is labelled a simulator wherever it shows: GET /version answers
// release "9.0-pvesim", every response carries a Server header that says
// so, and its logs and control API say "simulator".
//
// Behaviour follows Proxmox's own source; each handler cites the Proxmox file
// and function it copies. Abbreviations in those comments: PC pve-container,
// QS qemu-server, PS pve-storage, GC pve-guest-common, PM pve-manager, CO
// pve-common, AC pve-access-control, HS pve-http-server.
//
// # Use
//
//	sim, _ := pvesim.New(pvesim.Config{StartTime: t0}) // frozen clock
//	_ = sim.AddNode("pve-1")
//	_ = sim.AddStorage("pve-1", pvesim.StorageSpec{ID: "local-lvm", Type: pvesim.StorageLVMThin, Total: 100 << 30})
//	_ = sim.AddGuest(pvesim.GuestSpec{VMID: 214, Type: pvesim.LXC, Node: "pve-1", Storage: "local-lvm", Running: true})
//	_ = sim.AddToken("boxsnap@pve!boxsnap", secret, pvesim.Grant{Path: "/vms", Privs: []string{"PVEVMAdmin"}, Propagate: true})
//	base, _ := sim.Start(ctx)          // "https://127.0.0.1:port"; the API is base + "/api2/json"
//	tlsConfig := sim.TLSConfig()       // trusts the simulator's certificate only
//	sim.Advance(10 * time.Minute)      // "ten minutes later", no sleep
//
// # Tasks and the clock
//
// State lives in memory behind one mutex. Tasks need no goroutines: what a
// Proxmox worker does at once (checks, locks, snapstate=prepare) happens
// when the task starts; the rest happens when the simulator's clock reaches
// the task's due time, and is applied by the next call that looks at the
// state (an API request or a Go method), in due order. With Config.StartTime
// set, the clock moves only by Advance and SetTime, so tests are
// deterministic. With Config.TaskDuration < 0 a task is done by the next
// call, which suits the Telmate client (it polls every 2 s).
//
// Sim holds the surfaces only: the API's route table (one handler a
// route, in the api_*.go files), the control API and its Go methods, and
// the server. The state is a cluster of its own; who may do what is
// access, over the cluster's principals; the worker tasks a request or a
// fault starts are workers. Sim embeds the three, which never reach back up
// to it.
//
// # Faults and the control API
//
// Every fault is a Go method: FailNextTask, DieNextTask, CutNode, DropNode,
// ReconnectNode, RebootNode, OutsideSnapshot, OutsideRollback,
// OutsideDelete, SetLock, Unlock, Write, FillStorage, Advance, SetTime. The
// same are served under /pvesim/control/<action> (POST, JSON body,
// "Authorization: Bearer <secret>") when Config.Control is set: fail-next
// {type, vmid, message}, die-next {type, vmid}, cut-node, drop-node,
// reconnect-node and reboot-node {node}, outside-snapshot {vmid, name,
// description}, outside-rollback {vmid, name}, outside-delete {vmid, name,
// force}, lock {vmid, lock}, unlock {vmid}, write {vmid, bytes},
// fill-storage {node, storage, percent}, clock {advance: "10m" | set:
// RFC 3339}. The control API needs its own secret even on the loopback,
// because boxes an agent works in may share the host, and a fault injected
// from one of them would look like a real Proxmox failure.
//
// A node cut off (CutNode) answers HTTP 595 "No route to host" with an
// empty body for every /nodes/<node>/... call, as pveproxy passes on
// AnyEvent::HTTP's status when it cannot reach the node it proxies to;
// /nodes lists it "offline" and /cluster/resources its guests "unknown".
// DropNode closes the connection of those calls without an answer instead.
//
// # Simpler than Proxmox
//
// One root disk per guest (rootfs or scsi0), no mount points, no pending
// config (a running QEMU guest's changes apply at once), no HA, no
// replication, no migration, no guest agent, no backups; lvm (thick) and
// directory raw volumes take no snapshots (snapshot-as-volume-chain is not
// modelled); storage use is what guests write plus what their snapshots
// alone hold; the 401 delay is off unless Config.AuthFailDelay is set.
//
// pvesim must never import the boxsnap core (app/...), the store, jobs, the
// web app, or providers/proxmox: it stands where a real Proxmox VE would.
package pvesim

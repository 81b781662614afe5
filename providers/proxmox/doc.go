// Package proxmox is boxsnap's Proxmox VE backend: LXC containers and QEMU
// VMs (Linux and Windows), their snapshots with Proxmox's own locks,
// snapstate and per-storage rollback rules, restores in each storage's
// capture order, held copies for ZFS's order (behind a switch for live
// checks), the node task lists that show restores made outside boxsnap, boxes
// made by cloning a template or adopting a guest, and the doctor's checks of
// the token's rights and the storages.
//
// Every request goes through github.com/Telmate/proxmox-api-go over HTTPS
// with the certificate verified (unless a setting says otherwise by name);
// Proxmox's errors are translated into package providers' sentinels here, at
// the boundary, and a task's UPID is recorded before it is waited for and
// polled at this package's own pace (PollEvery), never the client's 2 s.
// The API token is never printed, logged, or put in an error.
//
// Backend is a facade over three parts, each of which uses only those below
// it: reader reads configs, storages, snapshots and tasks and changes
// nothing; lifecycle clones, powers and deletes guests; heldCopies finds,
// templates, labels and drops held copies. The Backend's own methods are
// the steps that join them (a take, a restore, a fork, a swap, the doctor).
//
// It must never import the boxsnap core (app/...), the store, jobs or the
// simulator (providers/pvesim) outside its tests: it speaks to a Proxmox VE,
// real or simulated, only over HTTP.
package proxmox

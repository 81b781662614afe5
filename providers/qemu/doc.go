// Package qemu is boxsnap's backend on QEMU virtual machines run by
// libvirt, through github.com/digitalocean/go-libvirt (pure Go, libvirt's
// RPC over its unix socket), against a libvirtd on this host.
//
// A box is a libvirt domain (boxsnap-<box ID>) made from a template: a
// kernel, an initramfs, a command line and a base qcow2, the box's own disk
// a qcow2 over that base (its backing file), in the backend's folder. The
// domain's metadata holds boxsnap's IDs only, and the identity reset's
// version its template carries, and, in an element of its own, the mark by
// which the scan for changes made outside boxsnap sees a revert (below). Each box has its own MAC address; the
// guest's identity reset (its init runs it before its network) makes a new
// machine ID, SSH host keys and host ID whenever its MAC addresses differ
// from its marker, so a fork's first boot makes its own.
//
// A snapshot is a qcow2 internal snapshot through libvirt, named by the
// snapshot's ID, its label in its description: of a stopped guest, its disk
// (qemu-img, by libvirt); of a running one, libvirt's checkpoint, which
// pauses the guest while it saves its disk and its memory. A restore is in
// place, in this capture order: a hard stop, then the undo (the core's own
// take, of the stopped guest: its disk), so nothing the guest wrote before
// the restore is in neither; then for a snapshot with memory the revert,
// which brings the guest back running with the snapshot's processes; for a
// disk snapshot the revert of the disk and a start, where the guest's
// processes start again. A fork extracts the
// snapshot's disk (qemu-img convert -l) into a new domain with a new MAC
// address. Snapshots live in the box's disk; a kept one outlives its box's
// release as a held copy (heldcopy.go): its disk, copied the same way into a
// qcow2 of its own in the imports folder before the box goes, a file that
// nothing can start, forked, looked inside, exported and deleted as any
// snapshot. A held copy keeps the disk, never the memory.
//
// A restore's steps say what they did to the guest's processes: the stop
// ended them where the guest ran, a memory revert resumed the guest with the
// snapshot's; the core's answer and box log pass that on.
//
// The box's access reaches the guest on a small read-only disk of its own
// (vdb, a raw file in the backend's folder), never in a snapshot, written
// by the restore before the memory revert resumes the guest and before the
// start after a disk revert; the guest reads it uncached. A disk, not
// fw_cfg (read only when QEMU starts, so a revert in a running QEMU keeps
// the old one) nor a virtio-serial channel or the guest agent (which reach
// the guest only once it runs again, racing its processes): the disk holds
// today's access before anything in the guest runs (access.go).
//
// A look inside a snapshot (providers.Browser: browse, read, download,
// compare) never boots it and never mounts a guest's file system in the
// host's kernel: qemu-img convert -l copies the snapshot's disk to a sparse
// raw file of the backend's own, e2fsck replays its journal there, and
// e2fsprogs' debugfs reads its ext4 (the whole disk, or the largest ext4
// partition) in user space, given inode numbers only, its output read by
// its structure, every name and byte in it hostile; the look keeps package
// guestfiles' rules (a path beneath the top, through no link, files only,
// bounded reads), which Docker's look keeps too.
//
// An export (exports.go) writes a snapshot's disk as a qcow2 of its own
// (qemu-img convert -l), whole or, against a base, holding only the
// clusters that differ from the base's disk, its backing file the word
// boxsnap-base; a snapshot with memory is exported as its disk. An import
// (imports.go) reads every archive as hostile: its qcow2's header is read by
// the backend itself before any qemu-img opens it (no backing file but the
// base, no external data file, no encryption, no unknown feature, a size a
// disk may have), then qemu-img info must agree; an incremental disk is
// given its base's disk and copied whole. An imported snapshot is a qcow2 in
// the backend's imports folder, labelled with the box it was imported into,
// which a fork, a look or another export reads as it reads a snapshot
// inside a box's disk.
//
// libvirt keeps no task history, so the scan for restores made outside
// boxsnap (providers.TaskLister, outside.go) reads what it can on this
// host's libvirtd: a revert made with libvirt (virsh snapshot-revert), by a
// mark of boxsnap's in the domain's metadata, which a revert replaces with
// the one the snapshot saved, its time when a scan first saw it; and a
// snapshot taken without boxsnap's label (virsh snapshot-create-as), at its
// own creation time; and a snapshot deleted with libvirt, when first seen.
// outside.go says what the scan cannot see.
//
// Package qemutest starts a private libvirtd for tests and builds their
// guest from Debian's packages.
//
// It implements the interfaces of package providers; it must never import
// the core (app/...), the store, the web app, the API, the CLI, jobs or
// another backend.
package qemu

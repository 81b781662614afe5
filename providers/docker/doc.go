// Package docker is boxsnap's backend on the Docker Engine, through the
// engine's official Go client (github.com/moby/moby/client), its API version
// negotiated with the engine (Debian 12's docker.io speaks 1.41).
//
// A box is a container made from the image of an owner's box template, with a
// named volume of its own mounted at VolumePath (the box's own Docker data),
// labels holding boxsnap's IDs only, and its identity value, the environment
// variable BOXSNAP_IDENTITY (set by boxsnap in place of a MAC address, passed
// on in a same-box swap, new on a fork). The container runs unprivileged,
// with no-new-privileges and no host mount.
//
// A snapshot is an image (boxsnap/snapshot:<snapshot ID>) of the container
// paused, which holds the box's volume too, under the volume's folder
// (labelled boxsnap.volume-in, volumelayer.go and takeinimage.go): the
// volume's changes since the parent take are written as a layer while the
// box runs, and in the pause only the paths whose stat changed since, as
// one more; with no parent take on record the whole volume is written,
// over an opaque whiteout of the folder. The image is tagged last, so a
// snapshot whose image exists is whole. The container's layer goes the
// same way: while the box runs, a box's first take on record commits the
// container (unpaused), and each later take writes one layer holding only
// the paths of the container's writable layer whose stat changed since
// the parent take (read through the archive endpoint), and a whiteout for
// each path gone, on its parent snapshot's image (layered.go); in the
// pause one more layer holds the paths whose stat changed since that read
// or whose time falls in its tick of the kernel's clock (changerecord), all
// loaded naming the parent's (or the commit's) layers by diff ID. The
// engine shares the layers, so each snapshot is whole on its own. An
// engine on containerd's image store wants every layer's content at a
// load: there, and for every snapshot taken before the volume went into
// the image, the volume is a copy of its own (boxsnap-<snapshot ID>),
// copied whole while the box runs and again, in the pause, only where a
// stat changed (volume.go), and the take commits the container in the
// pause. What changed is found against the record of the box's last take
// (package changerecord; held in memory and, with Config.StateDir, in a
// file of each box's container, written once the take's image exists): the
// engine's list of the container's changes, with each path's stat, and a
// scan of the volume's stats, both read in the pause; Changes compares the
// box with the same record, so a box that
// changed nothing answers unchanged, and a take of it pauses nothing: it
// loads the last take's layers under a config of its own
// (takeunchanged.go). On a local engine the pause freezes the box's
// cgroup directly, each freeze recorded first and thawed by the next
// start if boxsnap was killed in it; a take's layer files live in the
// state folder, swept at start (both package hoststate). Memory is not
// captured. A restore is
// a swap in Docker's capture order: the undo (a snapshot of the running
// box), stop the old container, make the new one from the snapshot's image
// with a new volume (which the engine fills from the image's volume folder
// as it makes the container, or which a copy of the snapshot's volume copy
// fills first), start it under the box's name, then delete the old one.
// Kept snapshots stay as they are past the box's release, except on a host
// whose boxes go with it (Config.BoxesGoWithHost).
//
// A look inside a snapshot (providers.Browser, package boxfiles) reads its files
// through the engine's archive endpoint from a container made, never
// started, from the snapshot's image (with its volume copy, if it has one,
// mounted read-only); the tar stream is parsed in Go, never extracted on
// the host.
//
// A reset (providers.Resetter, reset.go) makes a new container of the box's
// image with a new, empty volume, under the box's name, with its identity
// value kept and its identity marker (/.boxsnap/identity) written; a kept
// login and the access file a restore or a reset sets straight
// (providers.Straightener, straight.go; /.boxsnap/env) are written through
// the engine's archive endpoint (PUT /containers/{id}/archive, boxfiles),
// beneath the container's root, through no link, never by running anything
// of the box's.
//
// Exports, imports and share copies (providers.Exporter) are package
// moves', which the Backend embeds and wires to its images, labels, look
// containers and loads (moveengine.go): an archive carries a snapshot's
// image config and layers, against a base only those above the bottom the
// two images share, and an import loads it on the engine with this
// install's labels.
//
// The volume's scans and copies run in a container of a small image the backend makes
// from a static busybox (boxsnap/copier:1), never pulled from a registry;
// a box's checks scan its volume in a copier container of the volume's
// (<volume>-check), made at its first check and left running idle until
// the volume goes (volumelayer.go).
// The engine may be local (unix://), or remote over tcp:// with TLS or over
// ssh:// (as the docker CLI does, `ssh host docker system dial-stdio`).
//
// Backend answers the providers' interfaces through its parts, each a type
// of its own: the engine's client and the container and volume calls every
// part makes (engine, containers.go), the snapshots' images, volume copies
// and keep dates as the engine stores them (stored, snapshots.go) and the
// look containers and the files written into a box (boxfiles.Files, wired
// to the engine in moveengine.go); the boxes, the take, the restore, the
// reset and the fork are Backend's own methods.
//
// Package dockertest starts a private dockerd for tests; package hoststate
// holds what the backend keeps and reads on boxsnap's own host; package
// boxfiles reads a snapshot's and a box's files and writes boxsnap's files
// into a box.
//
// It implements the interfaces of package providers; it must never import
// the core, the store, the web app or another backend.
package docker

// Package boxfiles is the Docker backend's reads and writes of the files
// of snapshots and boxes: Files reads a snapshot's files (providers.Browser:
// list, read, open, walk, diff, compare) from a look container, made, never
// started, from the snapshot's image with its volume copy mounted read-only
// where it has one, and a box's files now from its own container, through
// the engine's archive endpoint, the tar stream parsed in Go and never
// extracted on the host (files.go); and it writes boxsnap's files into a
// box's container (its identity marker, its access file, a kept login)
// through the same endpoint, beneath the container's root, through no link,
// given to the box's user, never by running anything of the box's
// (write.go). The docker Backend embeds it; moves reads a snapshot's files
// for a share copy through its LookAt and WalkLook.
//
// It reaches the engine through the moby client and the backend's images,
// volume copies and containers through Engine; a look keeps the rules of
// package guestfiles, which QEMU's look keeps too. It imports only the
// standard library, the moby client and its types, providers and
// providers/guestfiles; it must never import app/..., jobs, package docker,
// package moves or another backend.
package boxfiles

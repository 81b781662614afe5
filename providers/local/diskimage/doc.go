// Package diskimage holds what makes a local box's disk an ext4 file system
// of its own: its image file (made with mkfs.ext4, of the box's bound's
// size), its mounts (the image on a folder beside it, its subfolder box
// bound on the box's folder), and its held room: every block the file
// system may write is allocated on the host beforehand, except those a
// hidden file in the image's root holds back, given to the box as it fills
// by a growth watch, so a full host never turns the box's file system
// read-only. The local backend (providers/local) decides which box gets an
// image, under its lock, and says it in words.
//
// It imports nothing of boxsnap; it must never import the app, jobs, or
// any provider.
package diskimage

// Package changerecord is the record of a Docker box's last take and the
// reading of what changed since: ChangeRecord (every path of the
// container's writable layer with its stat, every path of its volume with
// its stat line, and the snapshot's image), LayerSince and VolumeSince
// (what differs from a record), the volume's scan (ScanScript, ScanFind,
// ParseScan), the racy-tick rule that reads again in the pause a path
// whose time falls in the tick of a read made while the box ran
// (RacyLayer, RacyVolume), and the record's file (SaveRecord, LoadRecord,
// RemoveRecord), gzipped JSON written atomically, read back after a
// restart only by the install and container that wrote it.
//
// It is pure data and files: it talks to no engine and runs nothing. It
// imports only the standard library and the moby API's container types;
// it imports nothing of boxsnap, and must never import package docker or
// any other.
package changerecord

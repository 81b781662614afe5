// Package state holds a local box's state file (state/<boxID>.json): its
// command and how it runs, whether it should run, its last take and
// parent, its owner and its process as recorded (BoxState, ProcRecord),
// read and written by States, whether a recorded process still runs, and
// which boxes the store holds (HeldBoxes, by their state files and
// folders, listed), and which copies of boxes released elsewhere it keeps
// found (state/<boxID>.found: MarkFound, FoundMarked). It reaches only the store's state files and the host's /proc and
// cgroups by their paths, never a file inside a box.
//
// It imports only the standard library, providers,
// providers/local/process and providers/local/store; it must never import
// app/..., jobs, package local or another backend.
package state

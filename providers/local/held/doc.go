// Package held answers which snapshots the local backend's store holds
// (HeldSnapshots), each read from its label and manifest and marked
// incomplete with the first reason found (a delete that stopped part way,
// damage noted, content missing or damaged), and keeps the date each is
// kept until (SetKeptUntil). It reaches only the store's own folders.
//
// It imports only the standard library, providers and
// providers/local/store; it must never import app/..., jobs, package local
// or another backend.
package held

// Package content copies files into the local backend's content store
// and hashes them: Copier copies with a reflink where the file system makes
// one, else with copy_file_range, else with plain reads and writes (each
// refused way remembered for the two file systems it was refused between,
// so it is not asked again there), skips the holes of a
// sparse file, hashes with SHA-256 (a plain copy as its bytes pass, once), and keeps which content it found in
// the store since the last free, so a take asks the disk about each
// content once, and the stat of each object whose bytes it wrote or
// checked, so a shared tree need not hash an unmoved object again. It reaches only files boxsnap opened or names in its own
// store.
//
// It imports only the standard library and golang.org/x/sys/unix: it
// imports nothing of boxsnap, and must never import app/..., jobs,
// package local or another backend.
package content

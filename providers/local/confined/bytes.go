package confined

import "golang.org/x/sys/unix"

// AllocatedOf is what a file holds on disk, at most its size: a sparse file's
// copy holds its data only (content.Copier).
func AllocatedOf(st *unix.Stat_t) int64 {
	return min(st.Blocks*512, st.Size)
}

// TreeBytes is what the regular files a scan found hold on disk.
func TreeBytes(found []Scanned) int64 {
	var total int64
	for i := range found {
		if found[i].St.Mode&unix.S_IFMT == unix.S_IFREG {
			total += AllocatedOf(&found[i].St)
		}
	}
	return total
}

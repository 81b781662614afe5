package api

import (
	"mime"
	"net/http"
	"strconv"

	"github.com/boxsnap/boxsnap/app/logging"
)

// snapshotDownload streams one file of a snapshot, or a folder as a tar.gz
// (?path=, the whole snapshot when empty), recorded in the box log.
func (s snapshotReads) snapshotDownload(w http.ResponseWriter, r *http.Request) {
	box, ref := param(r, "box"), param(r, "snapshot")
	if err := checkBoxAndSnapshot(box, ref); err != nil {
		s.fail(w, r, err)
		return
	}
	c := caller(r)
	sn, _, err := s.core.SnapshotOfBox(r.Context(), c, box, ref)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := s.contents.OpenDownload(r.Context(), c, sn.ID, r.URL.Query().Get("path"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	longTransfer(w) // a large folder streams past the server's write timeout
	serveDownload(w, r, d.Name, d.Folder, d.Size)
	if err := d.WriteTo(r.Context(), w); err != nil {
		// The answer has begun: it ends as an error (the connection cut,
		// HTTP/1.1's chunks never ended), never as a whole download.
		logging.From(r.Context(), s.logger).Warn("download cut short", "snapshot", sn.ID, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// serveDownload writes a download's headers.
func serveDownload(w http.ResponseWriter, _ *http.Request, name string, folder bool, size int64) {
	h := w.Header()
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if folder {
		h.Set("Content-Type", "application/gzip")
	} else {
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.WriteHeader(http.StatusOK)
}

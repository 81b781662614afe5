package web

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
	"github.com/boxsnap/boxsnap/app/web/pagemodel"
)

func (s *Server) importResult(w http.ResponseWriter, r *http.Request, res *contents.ImportResult, err error) {
	if err != nil {
		p := s.rows.ImportPageOf(r.Context())
		p.Error = pagemodel.RefusalWords(err)
		s.render(w, r, statusOf(err), "import", p)
		return
	}
	s.done(w, r, "/import?"+url.Values{"box": {res.BoxName}}.Encode(), res.Words)
}

// importSnapshots imports the uploaded export files, streamed part by part into
// the data folder, checked whole before anything is published.
func (s *Server) importSnapshots(w http.ResponseWriter, r *http.Request) {
	longTransfer(w)
	r.Body = http.MaxBytesReader(w, r.Body, MaxImportBytes)
	var batch []*contents.Staged
	defer func() {
		for _, st := range batch {
			st.Remove()
		}
	}()
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	mr, err := r.MultipartReader()
	if mt != "multipart/form-data" || err != nil {
		s.importResult(w, r, nil, &snapshots.Refusal{Code: snapshots.CodeInvalid, Words: "Choose the export files to import."})
		return
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.importResult(w, r, nil, &snapshots.Refusal{Code: snapshots.CodeInvalid,
				Words: fmt.Sprintf("The upload was cut short or is over %d GiB. Nothing was imported.", MaxImportBytes>>30)})
			return
		}
		if part.FormName() != "file" || part.FileName() == "" {
			part.Close()
			continue
		}
		st, err := s.opts.Contents.Stage(r.Context(), part.FileName(), part)
		part.Close()
		if err != nil {
			s.importResult(w, r, nil, err)
			return
		}
		batch = append(batch, st)
	}
	res, err := s.opts.Contents.Import(r.Context(), snapshots.Owner(), batch)
	s.importResult(w, r, res, err)
}

package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/boxsnap/boxsnap/app/wire"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/snapshots/contents"
)

// MaxImportBytes caps an import's request: every export file it carries,
// together. An import streams into a temporary folder in the data folder,
// never into memory.
const MaxImportBytes = 64 << 30

// MaxImportFiles bounds the files of one import.
const MaxImportFiles = 100

// importSnapshots imports a batch of export files, in any order: the person
// only. POST /import with multipart/form-data, one part per file, or one
// file as the body itself (application/x-tar). Every file is checked against
// its manifest while it is staged; the import is then an operation, whose
// job has the backend check the whole batch before it publishes anything: a
// refusal names what is wrong, and nothing is half-imported. The call waits
// for the operation (?wait=false answers it at once, 202;
// ?request=<ID> makes a repeat the same import).
func (s snapshotMoves) importSnapshots(w http.ResponseWriter, r *http.Request) {
	c := caller(r)
	if err := snapshots.MayAct(c, snapshots.ActImport, nil, nil); err != nil {
		s.fail(w, r, err)
		return
	}
	request := r.URL.Query().Get("request")
	wait := r.URL.Query().Get("wait") == ""
	if !wait {
		var err error
		wait, err = waitParam(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
	}
	if err := checkRequest(request); err != nil {
		s.fail(w, r, err)
		return
	}
	longTransfer(w)
	batch, err := s.stageUpload(r)
	defer func() {
		for _, st := range batch {
			st.Remove() // nothing once the operation owns them
		}
	}()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	op, err := s.contents.AdmitImport(r.Context(), c, batch, request)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !wait {
		s.answerOperation(w, r, op, false)
		return
	}
	if op, err = s.waitOp(r.Context(), c, op.ID); err != nil {
		s.fail(w, r, err)
		return
	}
	if op.State != snapshots.OpDone && op.State != snapshots.OpFailed {
		s.answerOperation(w, r, op, false)
		return
	}
	res, err := s.contents.ImportResultOf(op)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.ImportAnswer{ImportResult: res, Operation: op.ID})
}

// The refusals of an upload that is not export files, or too large; the
// same wherever the upload is read.
func notAnUpload() *badRequest {
	return &badRequest{code: codeUnsupportedMediaType,
		words: "Send the export files as multipart/form-data, or one as application/x-tar."}
}

func importTooLarge() *badRequest {
	return &badRequest{code: codeTooLarge,
		words: fmt.Sprintf("An import is at most %d GiB. Nothing was imported.", MaxImportBytes>>30)}
}

// stageUpload stages each file of an upload.
func (s snapshotMoves) stageUpload(r *http.Request) ([]*contents.Staged, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, notAnUpload()
	}
	var batch []*contents.Staged
	stage := func(name string, rd io.Reader) error {
		st, err := s.contents.Stage(r.Context(), name, rd)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return importTooLarge()
		}
		if err != nil {
			return err
		}
		batch = append(batch, st)
		return nil
	}
	switch mt {
	case "application/x-tar", "application/octet-stream":
		return batch, stage("the file", r.Body)
	case "multipart/form-data":
		if params["boundary"] == "" {
			return nil, invalid("The multipart body has no boundary.")
		}
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, invalid("The multipart body is unreadable.")
		}
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					return batch, importTooLarge()
				}
				return batch, invalid("The multipart body is cut short. Nothing was imported.")
			}
			if part.FormName() != "file" {
				part.Close()
				continue
			}
			if len(batch) == MaxImportFiles {
				return batch, invalid("An import takes at most %d files.", MaxImportFiles)
			}
			name := part.FileName()
			if name == "" || !isText(name) || len(name) > 200 {
				name = fmt.Sprintf("file %d", len(batch)+1)
			}
			err = stage(name, part)
			part.Close()
			if err != nil {
				return batch, err
			}
		}
		if len(batch) == 0 {
			return nil, invalid("Send at least one export file, as a part named file.")
		}
		return batch, nil
	}
	return nil, notAnUpload()
}

// TransferTimeout bounds an export's download or an import's upload, in
// place of the server's read and write timeouts, which bound every other
// request.
const TransferTimeout = time.Hour

// longTransfer moves the request's deadlines to TransferTimeout from now.
func longTransfer(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(TransferTimeout))
	_ = rc.SetWriteDeadline(time.Now().Add(TransferTimeout))
}

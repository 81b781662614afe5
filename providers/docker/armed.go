package docker

import (
	"bytes"
	"context"
	"fmt"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// armedScan is the volume's second scan, its process made and started in
// the copier before the pause and waiting for a line on its input, so that
// the pause holds the scan alone and not the making of a process.
type armedScan struct {
	id  string
	att client.ExecAttachResult
}

// arm starts the second scan, waiting.
func (v *volumeLayers) arm(ctx context.Context) error {
	cmd := []string{"/bin/busybox", "sh", "-c", "read go && " + scanScript("/from")}
	ex, err := v.b.c.ExecCreate(ctx, v.id, client.ExecCreateOptions{Cmd: cmd, AttachStdin: true, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return wrap(err, "start the volume's scan in the copier")
	}
	att, err := v.b.c.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return wrap(err, "start the volume's scan in the copier")
	}
	v.armed = &armedScan{id: ex.ID, att: att}
	return nil
}

// close ends a scan never fired (its process ends with its input).
func (a *armedScan) close() {
	if a != nil {
		a.att.Close()
	}
}

// fire lets the armed scan run and answers its output.
func (a *armedScan) fire(ctx context.Context, v *volumeLayers) (string, error) {
	defer a.att.Close()
	if _, err := a.att.Conn.Write([]byte("go\n")); err != nil {
		return "", fmt.Errorf("run the volume's scan in the copier: %w", err)
	}
	var out, errs bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errs, a.att.Reader); err != nil {
		return "", fmt.Errorf("read the copier's output: %w", err)
	}
	st, err := v.b.c.ExecInspect(ctx, a.id, client.ExecInspectOptions{})
	if err != nil {
		return "", wrap(err, "read how the volume's scan ended")
	}
	if st.ExitCode != 0 {
		return "", v.b.roomWords(ctx, copyFailed(st.ExitCode, out.String()+errs.String()))
	}
	return out.String(), nil
}

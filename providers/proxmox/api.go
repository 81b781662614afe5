package proxmox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	telmate "github.com/Telmate/proxmox-api-go/proxmox"

	"github.com/boxsnap/boxsnap/providers"
)

// api is the one place requests leave for Proxmox: each is one request
// through the Telmate client, never retried by it (its GET retries sleep 1 s
// and 2 s), and every error is translated here into providers' sentinels.
type api struct {
	c       *telmate.Client
	poll    time.Duration
	timeout time.Duration
}

// apiError is Proxmox's answer to a failed request: the HTTP status and its
// message (the reason phrase, or the body's message when there is one).
type apiError struct {
	Status  int
	Message string
	Path    string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("Proxmox answered %d %s (%s)", e.Status, e.Message, e.Path)
}

// Unwrap maps Proxmox's answers onto providers' sentinels.
func (e *apiError) Unwrap() error {
	switch {
	case e.Status == 595 || e.Status == 596 || e.Status == 502 || e.Status == 503 || e.Status == 504:
		return providers.ErrUnreachable
	case strings.Contains(e.Message, "does not exist") || strings.Contains(e.Message, "no such") ||
		strings.Contains(e.Message, "No such") || e.Status == 404:
		return providers.ErrNotFound
	}
	return nil
}

// translate turns the Telmate client's error (a status line, or a transport
// error) and the body it read into an error of ours. A transport error
// (refused, reset, timed out, a dropped connection) means the host does not
// answer.
func translate(path string, err error, body string) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) && (errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "context canceled")) {
		return fmt.Errorf("%s: %w", path, context.Canceled)
	}
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) ||
		strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "connection reset") {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("%s: %w", path, err)
		}
		return fmt.Errorf("%s: %w: %s", path, providers.ErrUnreachable, redact(err.Error()))
	}
	status, msg := parseStatus(err.Error())
	if body != "" {
		var env struct {
			Message string            `json:"message"`
			Errors  map[string]string `json:"errors"`
		}
		if json.Unmarshal([]byte(body), &env) == nil {
			if env.Message != "" {
				msg = strings.TrimSpace(env.Message)
			}
			for k, v := range env.Errors {
				msg += fmt.Sprintf(" %s: %s", k, strings.TrimSpace(v))
			}
		}
	}
	if status == 0 {
		return fmt.Errorf("%s: %s", path, redact(err.Error()))
	}
	return &apiError{Status: status, Message: msg, Path: path}
}

// redact keeps an API token out of any text that might carry one.
func redact(s string) string {
	if i := strings.Index(s, "PVEAPIToken="); i >= 0 {
		return s[:i] + "PVEAPIToken=(hidden)"
	}
	return s
}

func parseStatus(s string) (int, string) {
	code, rest, _ := strings.Cut(s, " ")
	n, err := strconv.Atoi(code)
	if err != nil || n < 100 || n > 999 {
		return 0, s
	}
	return n, rest
}

// fail translates a request's error; a request cut short by its own
// context (a worker stopping) is that, never an unreachable host.
func (a *api) fail(ctx context.Context, path string, err error, body string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", path, ctx.Err())
	}
	return translate(path, err, body)
}

// noRetry makes the client's GET give up at once.
func noRetry(error) bool { return true }

// get reads one path and decodes its data into out.
func (a *api) get(ctx context.Context, path string, out any) error {
	var env map[string]any
	if err := a.c.GetJsonRetryable(ctx, path, &env, 1, noRetry); err != nil {
		return a.fail(ctx, path, err, "")
	}
	raw, err := json.Marshal(env["data"])
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: read the answer: %w", path, err)
	}
	return nil
}

// post sends a POST and returns its data as a string (a UPID for a task).
func (a *api) post(ctx context.Context, path string, params map[string]any) (string, error) {
	body, err := a.c.CreateItemReturnStatus(ctx, params, path)
	if err != nil {
		return "", a.fail(ctx, path, err, body)
	}
	return dataString(body), nil
}

// put sends a PUT and returns its data as a string.
func (a *api) put(ctx context.Context, path string, params map[string]any) (string, error) {
	body, err := a.c.UpdateItemReturnStatus(ctx, params, path)
	if err != nil {
		return "", a.fail(ctx, path, err, body)
	}
	return dataString(body), nil
}

// del sends a DELETE. The client keeps the answer to itself, so a DELETE
// that starts a task is found in the node's task list afterwards (delTask).
func (a *api) del(ctx context.Context, path string) error {
	if err := a.c.Delete(ctx, path); err != nil {
		return a.fail(ctx, path, err, "")
	}
	return nil
}

func dataString(body string) string {
	var env struct {
		Data any `json:"data"`
	}
	if json.Unmarshal([]byte(body), &env) != nil {
		return ""
	}
	if s, ok := env.Data.(string); ok {
		return s
	}
	return ""
}

// taskStatus is GET /nodes/{node}/tasks/{upid}/status.
type taskStatus struct {
	UPID       string `json:"upid"`
	Node       string `json:"node"`
	Type       string `json:"type"`
	ID         string `json:"id"`
	User       string `json:"user"`
	Status     string `json:"status"`
	ExitStatus string `json:"exitstatus"`
	StartTime  int64  `json:"starttime"`
}

// nodeOfUPID reads the node from "UPID:<node>:...".
func nodeOfUPID(upid string) string {
	parts := strings.Split(upid, ":")
	if len(parts) > 2 && parts[0] == "UPID" {
		return parts[1]
	}
	return ""
}

func (a *api) task(ctx context.Context, upid string) (taskStatus, error) {
	var st taskStatus
	node := nodeOfUPID(upid)
	if node == "" {
		return st, fmt.Errorf("%q is not a Proxmox task reference", upid)
	}
	err := a.get(ctx, "/nodes/"+node+"/tasks/"+url.PathEscape(upid)+"/status", &st)
	return st, err
}

// taskOK reports whether an exit status is a success ("OK", "WARNINGS: n").
func taskOK(exit string) bool {
	return exit == "OK" || strings.HasPrefix(exit, "WARNINGS")
}

// wait records the task, then polls its status every a.poll until it stops,
// and returns its exit status. A task that failed returns a *TaskError. A
// recorder that takes the wait upon itself answers providers.ErrTaskPending,
// which wait returns at once.
func (a *api) wait(ctx context.Context, upid string, rec providers.Recorder) (taskStatus, error) {
	if upid == "" {
		return taskStatus{}, errors.New("Proxmox answered no task")
	}
	if err := providers.RecordTask(ctx, rec, providers.TaskRef{Host: nodeOfUPID(upid), ID: upid}); err != nil {
		return taskStatus{}, err
	}
	deadline := time.Now().Add(a.timeout)
	tick := time.NewTicker(a.poll)
	defer tick.Stop()
	for {
		st, err := a.task(ctx, upid)
		if err != nil {
			return st, err
		}
		if st.Status == "stopped" {
			if !taskOK(st.ExitStatus) {
				return st, &TaskError{UPID: upid, Type: st.Type, ExitStatus: st.ExitStatus}
			}
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("task %s still running after %s", upid, a.timeout)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-tick.C:
		}
	}
}

// TaskError is a Proxmox task that ended with an error: its exit status is
// Proxmox's words.
type TaskError struct {
	UPID       string
	Type       string
	ExitStatus string
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("Proxmox's %s task failed: %s", e.Type, e.ExitStatus)
}

// Unwrap maps a task's words onto providers' sentinels.
func (e *TaskError) Unwrap() error {
	if strings.Contains(e.ExitStatus, "does not exist") {
		return providers.ErrNotFound
	}
	return nil
}

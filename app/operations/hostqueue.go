package operations

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// A box whose data lives on one host's disk (a local box) is owned by that
// host (boxes.owner_host), and its operations run there only. The engine
// puts such an operation's job on its owner's own River queue, which only
// that host's workers listen on; every other operation goes on Queue, which
// every working process listens on. A queue per host was chosen over a rule
// the worker checks after fetching a job: a worker that fetched another
// host's job could only snooze it and hope another host fetched it next, so
// with several hosts an operation would wait a random time, while a queue
// hands it straight to a worker that can run it. The owner is read when the
// job goes in, in the admitting transaction, so a move or a takeover that
// changed it first sends the box's next operations to the new host.
//
// An operation that makes its box's data on another host than the box's
// owner (a fork asked on host-b of a snapshot of a box host-a owns: the
// new box lands on host-b) names that host in its parameters (RunsOn), and
// its job goes on that host's queue instead, on admission and on resume.

// HostQueue is the River queue of the operations of the boxes host owns:
// "ops-", the host's name in River's letters (lower case, digits, dashes)
// and a short digest of the name as given, so two names that read alike in
// those letters ("a.b", "a-b") still have queues of their own.
func HostQueue(host string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(host) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	name := strings.TrimRight(b.String(), "-")
	sum := sha256.Sum256([]byte(host))
	if name == "" {
		return "ops-" + hex.EncodeToString(sum[:4])
	}
	return "ops-" + name + "-" + hex.EncodeToString(sum[:4])
}

// RunsOn, embedded in an operation's parameters, names the host the
// operation runs on when that is not its box's owner; empty: its box's
// owner, or any host.
type RunsOn struct {
	RunsOn string `json:"runsOn,omitempty"`
}

// jobOpts are the insert options of box's operation job with parameters
// params: the queue of the host params name (RunsOn), else of box's owner
// when a host owns it, else nil (Args.InsertOpts: Queue).
func (e *Engine) jobOpts(ctx context.Context, tx pgx.Tx, box string, params json.RawMessage) (*river.InsertOpts, error) {
	var on RunsOn
	if len(params) > 0 && json.Unmarshal(params, &on) == nil && on.RunsOn != "" {
		opts := Args{}.InsertOpts()
		opts.Queue = HostQueue(on.RunsOn)
		return &opts, nil
	}
	if box == "" {
		return nil, nil
	}
	owner, err := e.st.HostBoxOwner(ctx, tx, box)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && owner == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the host that owns box %s: %w", box, err)
	}
	opts := Args{}.InsertOpts()
	opts.Queue = HostQueue(*owner)
	return &opts, nil
}

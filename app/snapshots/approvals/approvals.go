package approvals

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/operations"
	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Approvals is the requests for the person's word: an agent's restore
// recorded as a request bound to the plan it showed, read, listed, approved
// or declined by the person, the answers its agent has not been told yet,
// and whether a thread's turns are held meanwhile.
type Approvals struct {
	k      kernel
	r      restorer
	st     *store.Store
	ops    *operations.Engine
	now    func() time.Time
	logger *slog.Logger
}

// kernel is what requests need of the snapshot core: the box log, the
// owner's time zone and the records a request names. *snapshots.Service is
// one.
type kernel interface {
	Log(ctx context.Context, q db.DBTX, box, kind string, c snapshots.Caller, words, snapshot, op string, data any)
	TimeZone(ctx context.Context) *time.Location
	ThreadTitle(ctx context.Context, id *string) string
	BoxByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Box, error)
	SnapshotByID(ctx context.Context, q db.DBTX, id string) (*snapshots.Snapshot, error)
}

// restorer is the restore a request is for: the guard's words of what a
// restore would lose, and the restore an approval runs; package restore's
// Restores is one.
type restorer interface {
	Guard(ctx context.Context, c snapshots.Caller, b *snapshots.Box) []string
	Restore(ctx context.Context, c snapshots.Caller, req snapshots.RestoreRequest) (*snapshots.Operation, error)
}

// Options configure the requests: the store they are kept in, the engine
// whose operations an approved request started, the restore a request is
// for, the clock (nil is time.Now) and the logger (nil discards).
type Options struct {
	Store    *store.Store
	Engine   *operations.Engine
	Restores restorer
	Now      func() time.Time
	Logger   *slog.Logger
}

// New makes the requests for the person's word on the core k; the
// restore asks through it once given it (restore.Restores.UseApprovals).
func New(k kernel, opts Options) (*Approvals, error) {
	if k == nil || opts.Store == nil || opts.Engine == nil || opts.Restores == nil {
		return nil, errors.New("approvals: the core, a store, an engine and the restores are required")
	}
	s := &Approvals{k: k, r: opts.Restores, st: opts.Store, ops: opts.Engine, now: opts.Now, logger: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

const (
	// MaxAsks: a plan that changes asks again, at most three times; a plan
	// that keeps changing is not one the person can approve.
	MaxAsks = 3
	// PrefixApproval names a request.
	PrefixApproval = "ap"
)

// Approval states.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDeclined = "declined"
	ApprovalExpired  = "expired"
)

// Approval is a request for the person's word, with the plan it showed.
type Approval struct {
	ID           string     `json:"id"`
	Box          string     `json:"box"`
	BoxName      string     `json:"boxName"`
	Snapshot     string     `json:"snapshot"`
	SnapshotName string     `json:"snapshotName"`
	Thread       string     `json:"thread"`
	ThreadTitle  string     `json:"threadTitle"`
	State        string     `json:"state"`
	Execution    bool       `json:"execution"`
	Goes         []string   `json:"goes"`
	Plan         []string   `json:"plan"` // the plan in words: what goes, the undo
	AskedAt      time.Time  `json:"askedAt"`
	ExpiresAt    time.Time  `json:"expiresAt"`
	AnsweredAt   *time.Time `json:"answeredAt,omitempty"`
	Operation    *string    `json:"operation,omitempty"`
	Answer       *string    `json:"answer,omitempty"`
	planPrint    string
}

// Asked is box_restore's answer when it asked the person instead of
// restoring: not a refusal, a request waiting for their word.
type Asked struct {
	Approval *Approval
	Words    string
}

func (a *Asked) Error() string { return a.Words }

// AsAsked returns err's Asked, if box_restore asked instead.
func AsAsked(err error) (*Asked, bool) {
	var a *Asked
	ok := errors.As(err, &a)
	return a, ok
}

// planPrint is a restore request's plan in a few bytes: the box, its guest
// generation, the target and its state, and what else goes (the approval is
// bound to the plan it showed, so a changed plan is asked again).
func planPrint(b *snapshots.Box, sn *snapshots.Snapshot, goes []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%d|%s|%s|%s|%s\n%s", b.ID, b.Generation, b.State, sn.ID, sn.State, sn.Guest, strings.Join(goes, "\n"))
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// AskRestore records an agent's restore as a request for the person's
// word, and answers that it asked (an *Asked): the core's restore calls it
// where an agent must ask first.
func (s *Approvals) AskRestore(ctx context.Context, c snapshots.Caller, b *snapshots.Box, sn *snapshots.Snapshot, execution bool, settings snapshots.Settings) error {
	// The person sees everything the restore would lose, the asking
	// thread's own workspace included.
	goes := append([]string{}, s.r.Guard(ctx, snapshots.Owner(), b)...)
	now := s.now()
	id := snapshots.NewID(PrefixApproval)
	err := s.st.PersonApprovalInsert(ctx, s.st.Pool, db.PersonApprovalInsertParams{ID: id, BoxID: b.ID, SnapshotID: sn.ID,
		ThreadID: c.Thread, Plan: planPrint(b, sn, goes), Goes: goes, Execution: execution, AskedAt: now,
		ExpiresAt: now.Add(time.Duration(settings.ApprovalMinutes) * time.Minute)})
	if err != nil {
		return fmt.Errorf("record the request: %w", err)
	}
	words := askedWords(b.Name, sn.Name, id, execution)
	s.k.Log(ctx, s.st.Pool, b.ID, snapshots.EvRestoreRequested, c, logRequestedWords(sn.Name, id), sn.ID, "", nil)
	a, err := s.Get(ctx, snapshots.Owner(), id)
	if err != nil {
		return err
	}
	return &Asked{Approval: a, Words: words}
}

// Get reads one request, as the person sees it, expiring it if its
// time has passed.
func (s *Approvals) Get(ctx context.Context, c snapshots.Caller, id string) (*Approval, error) {
	if !c.IsPerson() {
		return nil, refusal(snapshots.CodeForbidden, onlyPersonAnswersWords)
	}
	r, err := s.st.PersonApprovalGet(ctx, s.st.Pool, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(snapshots.CodeNotFound, noRequestWords(id))
	}
	if err != nil {
		return nil, fmt.Errorf("read request %s: %w", id, err)
	}
	return s.approvalOf(ctx, r), nil
}

func (s *Approvals) approvalOf(ctx context.Context, r db.Approval) *Approval {
	a := &Approval{ID: r.ID, Box: r.BoxID, Snapshot: r.SnapshotID, Thread: r.ThreadID, State: r.State, Execution: r.Execution,
		Goes: r.Goes, AskedAt: r.AskedAt, ExpiresAt: r.ExpiresAt, AnsweredAt: r.AnsweredAt, Operation: r.OperationID, Answer: r.Answer, planPrint: r.Plan}
	if a.State == ApprovalPending && !s.now().Before(a.ExpiresAt) {
		words := requestExpiredUnansweredWords(a.ID, a.ExpiresAt.In(s.k.TimeZone(ctx)).Format("15:04"))
		if _, err := s.st.PersonApprovalExpire(ctx, s.st.Pool, db.PersonApprovalExpireParams{ID: a.ID, Answer: &words}); err == nil {
			a.State, a.Answer = ApprovalExpired, &words
		}
	}
	a.ThreadTitle = s.k.ThreadTitle(ctx, &a.Thread)
	if b, err := s.k.BoxByID(ctx, s.st.Reader(ctx), a.Box); err == nil {
		a.BoxName = b.Name
	}
	if sn, err := s.k.SnapshotByID(ctx, s.st.Reader(ctx), a.Snapshot); err == nil {
		a.SnapshotName = sn.Name
		a.Plan = approvalPlanWords(a, sn)
	}
	if w := s.outcome(ctx, a); w != "" && (a.Answer == nil || *a.Answer != w) {
		if _, err := s.st.PersonApprovalOutcome(ctx, s.st.Pool, db.PersonApprovalOutcomeParams{ID: a.ID, Answer: &w}); err != nil {
			s.logger.Warn("say how an approved restore ended", "request", a.ID, "err", err)
		} else {
			a.Answer = &w
		}
	}
	return a
}

// outcome says, in the past tense, how the restore an approved request
// started ended (done, failed or unknown); "" while it runs, or when the
// request was not approved.
func (s *Approvals) outcome(ctx context.Context, a *Approval) string {
	if a.State != ApprovalApproved || a.Operation == nil || a.AnsweredAt == nil {
		return ""
	}
	op, err := s.ops.ByID(ctx, s.st.Pool, *a.Operation)
	if err != nil {
		return ""
	}
	tz := s.k.TimeZone(ctx)
	at := a.AnsweredAt.In(tz).Format("15:04")
	switch op.State {
	case snapshots.OpDone:
		ended := at
		if op.EndedAt != nil {
			ended = op.EndedAt.In(tz).Format("15:04")
		}
		return approvedRestoredWords(a.ID, at, a.BoxName, a.SnapshotName, ended, op.ID)
	case snapshots.OpFailed:
		why := "no reason was recorded."
		if op.Error != nil && *op.Error != "" {
			why = *op.Error
		}
		return approvedFailedWords(a.ID, at, a.BoxName, a.SnapshotName, why, op.ID)
	case snapshots.OpUnknown:
		return approvedUnknownWords(a.ID, at, a.BoxName, a.SnapshotName, snapshots.UnknownWords(a.BoxName, op), op.ID)
	}
	return ""
}

// List lists the requests waiting for the person's word, oldest
// first; box, when set, narrows them to one box.
func (s *Approvals) List(ctx context.Context, c snapshots.Caller, box string) ([]*Approval, error) {
	if !c.IsPerson() {
		return nil, refusal(snapshots.CodeForbidden, onlyPersonAnswersWords)
	}
	rows, err := s.st.PersonApprovalsPending(ctx, s.st.Reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("requests: %w", err)
	}
	var out []*Approval
	for _, r := range rows {
		if box != "" && r.BoxID != box {
			continue
		}
		if a := s.approvalOf(ctx, r); a.State == ApprovalPending {
			out = append(out, a)
		}
	}
	return out, nil
}

// Approve gives the person's yes: the restore runs as the asking agent's,
// with the yes on its operation, an undo always taken. A plan that changed
// since the request restores nothing and shows the new plan, to be
// approved again (at most three times).
func (s *Approvals) Approve(ctx context.Context, c snapshots.Caller, id string) (*snapshots.Operation, error) {
	a, err := s.Get(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if err := pendingOrWords(a, s.k.TimeZone(ctx)); err != nil {
		return nil, err
	}
	b, err := s.k.BoxByID(ctx, s.st.Pool, a.Box)
	if err != nil {
		return nil, err
	}
	sn, err := s.k.SnapshotByID(ctx, s.st.Pool, a.Snapshot)
	if err != nil {
		return nil, s.closeRefused(ctx, a, requestSnapshotGoneWords)
	}
	goes := append([]string{}, s.r.Guard(ctx, snapshots.Owner(), b)...)
	if p := planPrint(b, sn, goes); p != a.planPrint {
		r, err := s.st.PersonApprovalGet(ctx, s.st.Pool, id)
		if err != nil {
			return nil, fmt.Errorf("read request %s: %w", id, err)
		}
		if r.Asks >= MaxAsks {
			return nil, s.closeRefused(ctx, a, planChangedTooOftenWords(id, MaxAsks))
		}
		if err := s.st.PersonApprovalReplan(ctx, s.st.Pool, db.PersonApprovalReplanParams{ID: id, Plan: p, Goes: goes}); err != nil {
			return nil, fmt.Errorf("replan request %s: %w", id, err)
		}
		a.Goes = goes
		return nil, refusal(snapshots.CodeConflict, planChangedWords(strings.Join(approvalPlanWords(a, sn), " ")))
	}
	yes := snapshots.Consent{By: "the person", At: s.now(), Request: id, Plan: a.planPrint, Goes: goes}
	op, err := s.r.Restore(ctx, snapshots.Agent(a.Thread), snapshots.RestoreRequest{Box: b.ID, Snapshot: sn.ID, Replace: true, RequestID: "approval-" + id, Consent: &yes})
	if err != nil {
		if r, ok := snapshots.AsRefusal(err); ok {
			return nil, s.closeRefused(ctx, a, requestCouldNotRunWords(id, r.Words))
		}
		return nil, err
	}
	words := approvedWords(id, yes.At.In(s.k.TimeZone(ctx)).Format("15:04"), b.Name, sn.Name, op.ID)
	if err := s.closeApproval(ctx, a, ApprovalApproved, words, &op.ID); err != nil {
		return nil, err
	}
	return op, nil
}

// Decline gives the person's no: nothing is restored, and the asking
// agent's next call says so.
func (s *Approvals) Decline(ctx context.Context, c snapshots.Caller, id string) error {
	a, err := s.Get(ctx, c, id)
	if err != nil {
		return err
	}
	if err := pendingOrWords(a, s.k.TimeZone(ctx)); err != nil {
		return err
	}
	words := declinedWords(id, a.BoxName, a.SnapshotName)
	if err := s.closeApproval(ctx, a, ApprovalDeclined, words, nil); err != nil {
		return err
	}
	s.k.Log(ctx, s.st.Pool, a.Box, snapshots.EvRestoreDeclined, c, logDeclinedWords(id, a.SnapshotName), a.Snapshot, "", nil)
	return nil
}

func pendingOrWords(a *Approval, tz *time.Location) error {
	switch a.State {
	case ApprovalPending:
		return nil
	case ApprovalExpired:
		return refusal(snapshots.CodeConflict, requestExpiredWords(a.ID, a.ExpiresAt.In(tz).Format("15:04")))
	}
	return refusal(snapshots.CodeConflict, requestWasWords(a.ID, a.State))
}

func (s *Approvals) closeApproval(ctx context.Context, a *Approval, state, words string, op *string) error {
	now := s.now()
	n, err := s.st.PersonApprovalAnswer(ctx, s.st.Pool, db.PersonApprovalAnswerParams{ID: a.ID, State: state, AnsweredAt: &now, Answer: &words, OperationID: op})
	if err != nil {
		return fmt.Errorf("answer request %s: %w", a.ID, err)
	}
	if n == 0 {
		return refusal(snapshots.CodeConflict, requestAnsweredWords(a.ID))
	}
	return nil
}

// closeRefused closes a request that cannot run, and refuses in words.
func (s *Approvals) closeRefused(ctx context.Context, a *Approval, words string) error {
	if err := s.closeApproval(ctx, a, ApprovalDeclined, words, nil); err != nil {
		return err
	}
	return refusal(snapshots.CodeConflict, words)
}

// News are the answers to a thread's requests that its agent has
// not been told yet: declined, expired or approved, and then how the
// approved one's restore ended (done, failed or unknown), in the past
// tense. Each is told once, on the agent's next call.
func (s *Approvals) News(ctx context.Context, thread string) []string {
	// Expire what waited too long first, so its answer is told too.
	if rows, err := s.st.PersonApprovalsPending(ctx, s.st.Reader(ctx)); err == nil {
		for _, r := range rows {
			if r.ThreadID == thread {
				s.approvalOf(ctx, r)
			}
		}
	}
	// An approved request whose restore has ended says so before it is
	// told: the restore's end made it news again.
	if rows, err := s.st.PersonApprovalsEnded(ctx, s.st.Pool, thread); err == nil {
		for _, r := range rows {
			s.approvalOf(ctx, r)
		}
	}
	words, err := s.st.PersonApprovalNews(ctx, s.st.Pool, thread)
	if err != nil {
		s.logger.Warn("approval news", "thread", thread, "err", err)
		return nil
	}
	out := make([]string, 0, len(words))
	for _, w := range words {
		if w != nil {
			out = append(out, *w)
		}
	}
	return out
}

// TurnHeld says why a thread's turns are held, or "": while a request to
// restore a box it has a workspace on waits, or that restore runs: nothing the
// thread does meanwhile would survive it.
func (s *Approvals) TurnHeld(ctx context.Context, thread string) string {
	// Only the boxes the thread has a workspace on, found by index: every
	// call of an agent asks, and the install's boxes are many.
	boxes, err := snapshots.BoxRows(s.st.PerfBoxesOfThread(ctx, s.st.Pool, thread))
	if err != nil {
		return ""
	}
	var pending []db.Approval
	read := false
	for _, b := range boxes {
		on := false
		for _, w := range b.Presence.Workspaces {
			if w.Thread == thread {
				on = true
			}
		}
		if !on || !b.IsExecutionMachine() {
			continue
		}
		if !read {
			pending, _ = s.st.PersonApprovalsPending(ctx, s.st.Pool)
			read = true
		}
		for _, r := range pending {
			if r.BoxID == b.ID && r.Execution && s.now().Before(r.ExpiresAt) {
				return HeldWords(b.Name)
			}
		}
		if ops, err := s.runningRestores(ctx, b.ID); err == nil && ops > 0 {
			return HeldWords(b.Name)
		}
	}
	return ""
}

// runningRestores counts a box's restores that run now.
func (s *Approvals) runningRestores(ctx context.Context, box string) (int64, error) {
	return s.st.PersonRunningRestores(ctx, s.st.Pool, &box)
}

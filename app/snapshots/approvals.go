package snapshots

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store/db"
)

// Requests for the person's word (section 5, "the form"). Where the
// specification makes an agent ask, box_restore records a request bound to
// the plan it showed and answers at once that it asked; the person approves
// or declines it on the pages, the API or the CLI. An approval runs the
// restore as the asking agent's, with the yes on its operation; a plan that
// changed refuses and shows the new one; a request expires after the
// setting's minutes. While a request for a box threads run on waits, or its
// restore runs, those threads' turns are held (their tools answer
// try_again).

// DefaultApprovalMinutes is how long a request waits for the person's word
// unless Settings says otherwise; MaxApprovalMinutes bounds the setting.
const (
	DefaultApprovalMinutes = 30
	MaxApprovalMinutes     = 24 * 60
	// MaxAsks: a plan that changes asks again, at most three times (decided
	// during unit 5).
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

// consent is the yes an approved restore carries on its operation (section
// 5: "recorded as that"; DESIGN.md: boxsnap knows who answered, so it names
// them).
type consent struct {
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	Request string    `json:"request"`
	Plan    string    `json:"plan"`
	Goes    []string  `json:"goes,omitempty"`
}

// planPrint is a restore request's plan in a few bytes: the box, its guest
// generation, the target and its state, and what else goes (section 5: "the
// approval is bound to the plan it showed").
func planPrint(b *Box, sn *Snapshot, goes []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%d|%s|%s|%s|%s\n%s", b.ID, b.Generation, b.State, sn.ID, sn.State, sn.Guest, strings.Join(goes, "\n"))
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// askRestore records an agent's restore as a request for the person's
// word, and answers that it asked (section 5).
func (s *Approvals) askRestore(ctx context.Context, c Caller, b *Box, sn *Snapshot, execution bool, settings Settings) error {
	// The person sees everything the restore would lose, the asking
	// thread's own workspace included.
	goes := append([]string{}, s.snaps.Guard(ctx, Owner(), b)...)
	now := s.now()
	id := NewID(PrefixApproval)
	err := s.st.PersonApprovalInsert(ctx, s.st.Pool, db.PersonApprovalInsertParams{ID: id, BoxID: b.ID, SnapshotID: sn.ID,
		ThreadID: c.Thread, Plan: planPrint(b, sn, goes), Goes: goes, Execution: execution, AskedAt: now,
		ExpiresAt: now.Add(time.Duration(settings.ApprovalMinutes) * time.Minute)})
	if err != nil {
		return fmt.Errorf("record the request: %w", err)
	}
	words := wordsAsked(b.Name, sn.Name, id, execution)
	s.Log(ctx, s.st.Pool, b.ID, EvRestoreRequested, c, logRequestedWords(sn.Name, id), sn.ID, "", nil)
	a, err := s.Get(ctx, Owner(), id)
	if err != nil {
		return err
	}
	return &Asked{Approval: a, Words: words}
}

// EvRestoreRequested is the box log's event for a request for the
// person's word.
const EvRestoreRequested = "restore-requested"

// Get reads one request, as the person sees it, expiring it if its
// time has passed.
func (s *Approvals) Get(ctx context.Context, c Caller, id string) (*Approval, error) {
	if !c.IsPerson() {
		return nil, refusal(CodeForbidden, wordsOnlyPersonAnswers)
	}
	r, err := s.st.PersonApprovalGet(ctx, s.st.Pool, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(CodeNotFound, wordsNoRequest(id))
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
		words := wordsRequestExpiredUnanswered(a.ID, a.ExpiresAt.In(s.TimeZone(ctx)).Format("15:04"))
		if _, err := s.st.PersonApprovalExpire(ctx, s.st.Pool, db.PersonApprovalExpireParams{ID: a.ID, Answer: &words}); err == nil {
			a.State, a.Answer = ApprovalExpired, &words
		}
	}
	a.ThreadTitle = s.ThreadTitle(ctx, &a.Thread)
	if b, err := s.BoxByID(ctx, s.st.Reader(ctx), a.Box); err == nil {
		a.BoxName = b.Name
	}
	if sn, err := s.SnapshotByID(ctx, s.st.Reader(ctx), a.Snapshot); err == nil {
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
	tz := s.TimeZone(ctx)
	at := a.AnsweredAt.In(tz).Format("15:04")
	switch op.State {
	case OpDone:
		ended := at
		if op.EndedAt != nil {
			ended = op.EndedAt.In(tz).Format("15:04")
		}
		return wordsApprovedRestored(a.ID, at, a.BoxName, a.SnapshotName, ended, op.ID)
	case OpFailed:
		why := "no reason was recorded."
		if op.Error != nil && *op.Error != "" {
			why = *op.Error
		}
		return wordsApprovedFailed(a.ID, at, a.BoxName, a.SnapshotName, why, op.ID)
	case OpUnknown:
		return wordsApprovedUnknown(a.ID, at, a.BoxName, a.SnapshotName, UnknownWords(a.BoxName, op), op.ID)
	}
	return ""
}

// List lists the requests waiting for the person's word, oldest
// first; box, when set, narrows them to one box.
func (s *Approvals) List(ctx context.Context, c Caller, box string) ([]*Approval, error) {
	if !c.IsPerson() {
		return nil, refusal(CodeForbidden, wordsOnlyPersonAnswers)
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
func (s *Approvals) Approve(ctx context.Context, c Caller, id string) (*Operation, error) {
	a, err := s.Get(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if err := pendingOrWords(a, s.TimeZone(ctx)); err != nil {
		return nil, err
	}
	b, err := s.BoxByID(ctx, s.st.Pool, a.Box)
	if err != nil {
		return nil, err
	}
	sn, err := s.SnapshotByID(ctx, s.st.Pool, a.Snapshot)
	if err != nil {
		return nil, s.closeRefused(ctx, a, wordsRequestSnapshotGone)
	}
	goes := append([]string{}, s.snaps.Guard(ctx, Owner(), b)...)
	if p := planPrint(b, sn, goes); p != a.planPrint {
		r, err := s.st.PersonApprovalGet(ctx, s.st.Pool, id)
		if err != nil {
			return nil, fmt.Errorf("read request %s: %w", id, err)
		}
		if r.Asks >= MaxAsks {
			return nil, s.closeRefused(ctx, a, wordsPlanChangedTooOften(id, MaxAsks))
		}
		if err := s.st.PersonApprovalReplan(ctx, s.st.Pool, db.PersonApprovalReplanParams{ID: id, Plan: p, Goes: goes}); err != nil {
			return nil, fmt.Errorf("replan request %s: %w", id, err)
		}
		a.Goes = goes
		return nil, refusal(CodeConflict, wordsPlanChanged(strings.Join(approvalPlanWords(a, sn), " ")))
	}
	yes := consent{By: "the person", At: s.now(), Request: id, Plan: a.planPrint, Goes: goes}
	op, err := s.snaps.Restore(ctx, Agent(a.Thread), RestoreRequest{Box: b.ID, Snapshot: sn.ID, Replace: true, RequestID: "approval-" + id, consent: &yes})
	if err != nil {
		if r, ok := AsRefusal(err); ok {
			return nil, s.closeRefused(ctx, a, wordsRequestCouldNotRun(id, r.Words))
		}
		return nil, err
	}
	words := wordsApproved(id, yes.At.In(s.TimeZone(ctx)).Format("15:04"), b.Name, sn.Name, op.ID)
	if err := s.closeApproval(ctx, a, ApprovalApproved, words, &op.ID); err != nil {
		return nil, err
	}
	return op, nil
}

// Decline gives the person's no: nothing is restored, and the asking
// agent's next call says so.
func (s *Approvals) Decline(ctx context.Context, c Caller, id string) error {
	a, err := s.Get(ctx, c, id)
	if err != nil {
		return err
	}
	if err := pendingOrWords(a, s.TimeZone(ctx)); err != nil {
		return err
	}
	words := wordsDeclined(id, a.BoxName, a.SnapshotName)
	if err := s.closeApproval(ctx, a, ApprovalDeclined, words, nil); err != nil {
		return err
	}
	s.Log(ctx, s.st.Pool, a.Box, EvRestoreDeclined, c, logDeclinedWords(id, a.SnapshotName), a.Snapshot, "", nil)
	return nil
}

// EvRestoreDeclined is the box log's event for a declined request.
const EvRestoreDeclined = "restore-declined"

func pendingOrWords(a *Approval, tz *time.Location) error {
	switch a.State {
	case ApprovalPending:
		return nil
	case ApprovalExpired:
		return refusal(CodeConflict, wordsRequestExpired(a.ID, a.ExpiresAt.In(tz).Format("15:04")))
	}
	return refusal(CodeConflict, wordsRequestWas(a.ID, a.State))
}

func (s *Approvals) closeApproval(ctx context.Context, a *Approval, state, words string, op *string) error {
	now := s.now()
	n, err := s.st.PersonApprovalAnswer(ctx, s.st.Pool, db.PersonApprovalAnswerParams{ID: a.ID, State: state, AnsweredAt: &now, Answer: &words, OperationID: op})
	if err != nil {
		return fmt.Errorf("answer request %s: %w", a.ID, err)
	}
	if n == 0 {
		return refusal(CodeConflict, wordsRequestAnswered(a.ID))
	}
	return nil
}

// closeRefused closes a request that cannot run, and refuses in words.
func (s *Approvals) closeRefused(ctx context.Context, a *Approval, words string) error {
	if err := s.closeApproval(ctx, a, ApprovalDeclined, words, nil); err != nil {
		return err
	}
	return refusal(CodeConflict, words)
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
	// told: the restore's end made it news again (migration 00254).
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
// restore a box it has a workspace on waits, or that restore runs (section
// 5, "Holding turns on the box").
func (s *Approvals) TurnHeld(ctx context.Context, thread string) string {
	// Only the boxes the thread has a workspace on, found by index: every
	// call of an agent asks, and the install's boxes are many.
	boxes, err := BoxRows(s.st.PerfBoxesOfThread(ctx, s.st.Pool, thread))
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

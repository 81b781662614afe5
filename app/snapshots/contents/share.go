package contents

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
)

// Share codes: a code hands out a copy
// of one snapshot with its secrets removed (providers.Secrets and the
// settings' own paths). The code is shown once; only its SHA-256 is kept.
const (
	// SharePrefix starts every code: "bxs_" and 43 letters, 47 in all.
	SharePrefix = "bxs_"
	// PrefixShare is a share's ID prefix.
	PrefixShare = "sh"
	// MaxLiveShares is how many codes work at one time on an install, so
	// few live codes are out at once: revoke one to make another.
	MaxLiveShares = 5
)

// Share is a share code's record; the code itself is never kept. It is a
// row of shares as it is (db.Share converts to it).
type Share struct {
	ID         string     `json:"id"`
	CodeHash   []byte     `json:"-"`
	BoxID      string     `json:"box"`
	SnapshotID string     `json:"snapshot"`
	CopyID     string     `json:"copy"`
	CopyBoxID  string     `json:"-"`
	Removed    []string   `json:"removed"`
	HomeExtra  []string   `json:"-"`
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	RevokedAt  *time.Time `json:"revokedAt,omitempty"`
	Redeemed   int        `json:"redeemed"`
	RedeemedAt *time.Time `json:"redeemedAt,omitempty"`
}

// Live reports whether the code still works at now.
func (sh *Share) Live(now time.Time) bool {
	return sh.RevokedAt == nil && now.Before(sh.ExpiresAt)
}

// MadeShare is a new share code: the code, shown once, and its record.
type MadeShare struct {
	Code  string `json:"code"`
	Share *Share `json:"share"`
}

func hashCode(code string) []byte {
	h := sha256.Sum256([]byte(strings.TrimSpace(code)))
	return h[:]
}

// SharePlan is what a share code of a snapshot would be: its snapshot, its
// box, what its copy leaves out, the files that block it (a credential
// stays where it cannot be removed: no code is made) and how many days it
// works by default.
type SharePlan struct {
	Snapshot *snapshots.Snapshot
	Box      *snapshots.Box
	Removed  []string
	Blocked  []providers.Finding
	Days     int
}

// PlanShare checks that a snapshot can be shared and says what its copy
// leaves out, changing nothing: the share dialog's words.
func (s *Contents) PlanShare(ctx context.Context, c snapshots.Caller, box, snapshot string) (*SharePlan, error) {
	sn, b, err := s.snaps.SnapshotOfBox(ctx, c, box, snapshot)
	if err != nil {
		return nil, err
	}
	p := &SharePlan{Snapshot: sn, Box: b}
	if err := snapshots.MayAct(c, snapshots.ActShare, b, sn); err != nil {
		return p, err
	}
	if sn.State != snapshots.StateReady {
		return p, refusal(snapshots.CodePlan, cannotBeSharedWords(sn.Name, snapshots.StateWords(sn.State)))
	}
	st, err := s.k.Settings(ctx)
	if err != nil {
		return p, err
	}
	p.Days = st.ShareDays
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return p, err
	}
	ex, ok := be.Snap.(providers.Exporter)
	if !ok {
		return p, refusal(snapshots.CodePlan, cannotShareSecretsWords(be.Label))
	}
	rep, err := ex.Scrub(ctx, snapshots.RefOf(sn, b), s.k.Secrets(ctx))
	if err != nil {
		return p, fmt.Errorf("share ‘%s’: %w", sn.Name, err)
	}
	p.Removed, p.Blocked = rep.Removed, rep.Blocked
	if len(p.Blocked) > 0 {
		return p, refusal(snapshots.CodePlan, BlockedWords(p.Blocked))
	}
	return p, nil
}

// MakeShare makes a share code for a snapshot: the person only, a ready
// snapshot of a backend that exports, while fewer than MaxLiveShares codes
// work. What the copy leaves out is worked out now and kept on the record,
// so the page can say it; a copy that would still hold a credential is
// Blocked, and no code is made.
func (s *Contents) MakeShare(ctx context.Context, c snapshots.Caller, box, snapshot string, days int) (*MadeShare, error) {
	sn, b, err := s.snaps.SnapshotOfBox(ctx, c, box, snapshot)
	if err != nil {
		return nil, err
	}
	if err := snapshots.MayAct(c, snapshots.ActShare, b, sn); err != nil {
		return nil, err
	}
	if sn.State != snapshots.StateReady {
		return nil, refusal(snapshots.CodePlan, cannotBeSharedWords(sn.Name, snapshots.StateWords(sn.State)))
	}
	st, err := s.k.Settings(ctx)
	if err != nil {
		return nil, err
	}
	if days == 0 {
		days = st.ShareDays
	}
	if days < 1 || days > snapshots.MaxShareDays {
		return nil, refusal(snapshots.CodeInvalid, snapshots.ShareDaysWords(snapshots.MaxShareDays))
	}
	be, err := s.k.Backend(b.BackendID)
	if err != nil {
		return nil, err
	}
	ex, ok := be.Snap.(providers.Exporter)
	if !ok {
		return nil, refusal(snapshots.CodePlan, cannotShareSecretsWords(be.Label))
	}
	extra := st.AlsoRemove
	if extra == nil {
		extra = []string{}
	}
	if err := s.roomForShare(ctx); err != nil {
		return nil, err
	}
	rep, err := ex.Scrub(ctx, snapshots.RefOf(sn, b), providers.DefaultSecrets().With(extra))
	if err != nil {
		return nil, fmt.Errorf("share ‘%s’: %w", sn.Name, err)
	}
	if len(rep.Blocked) > 0 {
		return nil, refusal(snapshots.CodePlan, BlockedWords(rep.Blocked))
	}
	removed := rep.Removed
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	code := SharePrefix + base64.RawURLEncoding.EncodeToString(raw)
	var r db.Share
	err = pgx.BeginFunc(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if err := s.st.MoveSharesLock(ctx, tx); err != nil {
			return err
		}
		now := s.now()
		if err := s.roomForShareIn(ctx, tx, now); err != nil {
			return err
		}
		var err error
		r, err = s.st.MoveShareInsert(ctx, tx, db.MoveShareInsertParams{ID: snapshots.NewID(PrefixShare), CodeHash: hashCode(code),
			BoxID: b.ID, SnapshotID: sn.ID, CopyID: snapshots.NewID(snapshots.PrefixSnapshot), CopyBoxID: snapshots.NewID(snapshots.PrefixBox), Removed: removed,
			HomeExtra: extra, CreatedAt: now, ExpiresAt: now.Add(time.Duration(days) * 24 * time.Hour)})
		return err
	})
	if _, ok := snapshots.AsRefusal(err); ok {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("record share code: %w", err)
	}
	sh := (*Share)(&r)
	s.k.Log(ctx, s.st.Pool, b.ID, EvShared, c, logSharedWords(sn.Name, sh.ExpiresAt, removed, s.k.TimeZone(ctx)), sn.ID, "", nil)
	return &MadeShare{Code: code, Share: sh}, nil
}

// roomForShare refuses a new code while MaxLiveShares work, before the
// scan; roomForShareIn checks again, under the lock, as the code is added.
func (s *Contents) roomForShare(ctx context.Context) error {
	return s.roomForShareIn(ctx, s.st.Pool, s.now())
}

func (s *Contents) roomForShareIn(ctx context.Context, q db.DBTX, now time.Time) error {
	n, err := s.st.MoveSharesLive(ctx, q, now)
	if err != nil {
		return fmt.Errorf("count share codes: %w", err)
	}
	if n >= MaxLiveShares {
		return refusal(snapshots.CodeLimit, shareCodesFullWords(MaxLiveShares))
	}
	return nil
}

// RemovedWords says what a share code's copy leaves out, for its page.
func (sh *Share) RemovedWords() string { return removedWords(sh.Removed) }

// Shares lists share codes, of one snapshot or (snapshot empty) all: the
// person only.
func (s *Contents) Shares(ctx context.Context, c snapshots.Caller, snapshot string) ([]*Share, error) {
	if err := snapshots.MayAct(c, snapshots.ActShare, nil, nil); err != nil {
		return nil, err
	}
	var rows []db.Share
	var err error
	if snapshot != "" {
		rows, err = s.st.MoveSharesOfSnapshot(ctx, s.st.Pool, snapshot)
	} else {
		rows, err = s.st.MoveShares(ctx, s.st.Pool)
	}
	if err != nil {
		return nil, fmt.Errorf("read share codes: %w", err)
	}
	out := make([]*Share, len(rows))
	for i := range rows {
		out[i] = (*Share)(&rows[i])
	}
	return out, nil
}

// RevokeShare ends a share code now: the person only.
func (s *Contents) RevokeShare(ctx context.Context, c snapshots.Caller, id string) (*Share, error) {
	if err := snapshots.MayAct(c, snapshots.ActShare, nil, nil); err != nil {
		return nil, err
	}
	now := s.now()
	r, err := s.st.MoveShareRevoke(ctx, s.st.Pool, db.MoveShareRevokeParams{ID: id, RevokedAt: &now})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(snapshots.CodeNotFound, noLiveShareCodeWords(id))
	}
	if err != nil {
		return nil, fmt.Errorf("revoke share code: %w", err)
	}
	sh := (*Share)(&r)
	s.k.Log(ctx, s.st.Pool, sh.BoxID, EvShareRevoked, c, logShareRevokedWords, sh.SnapshotID, "", nil)
	return sh, nil
}

// shareByCode finds a live share code. A wrong, revoked or expired code is
// refused in the same words but the last, so a guess tells little.
func (s *Contents) shareByCode(ctx context.Context, code string) (*Share, error) {
	code = strings.TrimSpace(code)
	if !strings.HasPrefix(code, SharePrefix) || len(code) != len(SharePrefix)+43 {
		return nil, refusal(snapshots.CodeInvalid, notAShareCodeWords(SharePrefix, len(SharePrefix)+43))
	}
	r, err := s.st.MoveShareByHash(ctx, s.st.Pool, hashCode(code))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, refusal(snapshots.CodeNotFound, noShareCodeHereWords)
	}
	if err != nil {
		return nil, fmt.Errorf("read share code: %w", err)
	}
	sh := (*Share)(&r)
	if sh.RevokedAt != nil {
		return nil, refusal(snapshots.CodeGone, shareRevokedWords)
	}
	if !s.now().Before(sh.ExpiresAt) {
		return nil, refusal(snapshots.CodeGone, shareExpiredWords(sh.ExpiresAt.In(s.k.TimeZone(ctx)).Format("2 Jan 15:04")))
	}
	return sh, nil
}

// SharedExport is a share code's copy, checked and ready to write as an
// export file. The code is its own authority: whoever holds it may take the
// copy, so a code works across installs and teams.
type SharedExport struct {
	s     *Contents
	share *Share
	sn    *snapshots.Snapshot
	box   *snapshots.Box
	ex    providers.Exporter
	kind  string
}

// FileName is a name for the copy's export file.
func (e *SharedExport) FileName() string { return e.box.Name + "-shared" + ExportExtension }

// PlanShared checks a share code and finds its snapshot, and that its copy
// is not Blocked.
func (s *Contents) PlanShared(ctx context.Context, code string) (*SharedExport, error) {
	sh, err := s.shareByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	sn, err := s.k.SnapshotByID(ctx, s.st.Pool, sh.SnapshotID)
	if err != nil {
		return nil, refusal(snapshots.CodeGone, shareSnapshotGoneWords)
	}
	if sn.State != snapshots.StateReady {
		return nil, refusal(snapshots.CodePlan, shareSnapshotIsWords(snapshots.StateWords(sn.State)))
	}
	b, err := s.k.BoxByID(ctx, s.st.Pool, sn.BoxID)
	if err != nil {
		return nil, err
	}
	be, err := s.k.Backend(sn.BackendID)
	if err != nil {
		return nil, err
	}
	ex, ok := be.Snap.(providers.Exporter)
	if !ok {
		return nil, refusal(snapshots.CodePlan, cannotShareWords(be.Label))
	}
	// Checked before a byte of the copy goes out; the export checks again.
	rep, err := ex.Scrub(ctx, snapshots.RefOf(sn, b), providers.DefaultSecrets().With(sh.HomeExtra))
	if err != nil {
		return nil, fmt.Errorf("check the shared copy: %w", err)
	}
	if len(rep.Blocked) > 0 {
		return nil, refusal(snapshots.CodePlan, BlockedWords(rep.Blocked))
	}
	return &SharedExport{s: s, share: sh, sn: sn, box: b, ex: ex, kind: be.Kind}, nil
}

// WriteTo writes the copy as an export file of one snapshot, for a box that
// does not exist yet: the copy's ID and its box's are fixed on the share, so
// redeeming twice on one install finds the box it made.
func (e *SharedExport) WriteTo(ctx context.Context, w io.Writer) error {
	s := e.s
	name, _ := snapshots.CleanName(e.box.Name + "-shared")
	if snapshots.CheckBoxName(name) != nil {
		name = "shared-box"
	}
	m := &ExportManifest{Format: exportFormat, Install: s.install, ExportedAt: s.now().UTC(),
		Box: ExportedBox{ID: e.share.CopyBoxID, Name: name, Kind: e.box.Kind, System: e.box.System, Backend: e.kind}}
	tw := tar.NewWriter(w)
	sec := providers.DefaultSecrets().With(e.share.HomeExtra)
	part := newPartWriter(tw, exportMember+e.share.CopyID+".tar.gz", s.now())
	if err := e.ex.ExportSnapshot(ctx, snapshots.RefOf(e.sn, e.box), providers.ExportOptions{Scrub: &sec, AsID: e.share.CopyID}, part); err != nil {
		var be *providers.BlockedError
		if errors.As(err, &be) {
			return refusal(snapshots.CodePlan, BlockedWords(be.Blocked))
		}
		return fmt.Errorf("write the shared copy: %w", err)
	}
	if err := part.Close(); err != nil {
		return fmt.Errorf("write the shared copy: %w", err)
	}
	note := fmt.Sprintf("Shared from %s%s.", e.box.Name, withoutWords(e.share.Removed))
	if len(note) > snapshots.MaxNoteBytes {
		note = note[:snapshots.MaxNoteBytes]
	}
	m.Snapshots = []ExportedSnapshot{{ID: e.share.CopyID, Name: e.sn.Name, Note: &note, TakenAt: e.sn.TakenAt, CapturedAt: e.sn.CapturedAt,
		Holds: exportedHolds, ForkSafe: e.sn.ForkSafe, Parts: part.parts, Size: part.size, SHA256: hex.EncodeToString(part.sum.Sum(nil))}}
	raw, _ := json.MarshalIndent(m, "", "  ")
	if err := tw.WriteHeader(&tar.Header{Name: ExportManifestName, Mode: 0o644, Size: int64(len(raw)), ModTime: m.ExportedAt, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(raw); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	now := s.now()
	if err := s.st.MoveShareRedeemed(ctx, s.st.Pool, db.MoveShareRedeemedParams{ID: e.share.ID, RedeemedAt: &now}); err != nil {
		return fmt.Errorf("record the redeem: %w", err)
	}
	s.k.Log(ctx, s.st.Pool, e.box.ID, EvShareRedeemed, snapshots.System("a share code was redeemed"), logShareRedeemedWords(e.sn.Name, e.share.Removed), e.sn.ID, "", nil)
	return nil
}

// Redeem redeems a share code of this install: the copy, without its
// secrets, becomes a new box of the person's. A code of another install is
// redeemed by taking its copy from there (GET /api/v1/shared/{code}) and
// importing it here, which is what the CLI's --from does.
func (s *Contents) Redeem(ctx context.Context, c snapshots.Caller, code string) (*ImportResult, error) {
	if err := snapshots.MayAct(c, snapshots.ActShare, nil, nil); err != nil {
		return nil, err
	}
	e, err := s.PlanShared(ctx, code)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(e.WriteTo(ctx, pw)) }()
	st, err := s.Stage(ctx, "the shared copy", pr)
	pr.CloseWithError(errors.New("redeem stopped"))
	if err != nil {
		return nil, err
	}
	defer st.Remove()
	return s.Import(ctx, c, []*Staged{st})
}

package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
)

// Lifetimes of what this package hands out.
const (
	SessionLifetime   = 14 * 24 * time.Hour
	SetupLinkLifetime = 24 * time.Hour
)

// Token prefixes, so a leaked token says what it is.
const (
	SessionPrefix  = "bxs_"
	APITokenPrefix = "bxt_"
	SetupPrefix    = "bxl_"
)

// Errors a sign-in answers with. They are the words the person reads.
var (
	ErrWrongPassword = errors.New("That password is not right.")
	ErrNoOwner       = errors.New("No password is set yet. Use the one-time link boxsnap printed at start.")
	ErrLinkUsed      = errors.New("This link has been used or has expired. Restart boxsnap for a new one, or sign in.")
	ErrNoSession     = errors.New("not signed in")
)

// Service signs the owner in and out and checks tokens.
type Service struct {
	st     *store.Store
	logger *slog.Logger
	now    func() time.Time
	// hashes holds a slot per password hash running now: argon2id takes
	// 19 MiB each, so a flood of sign-ins waits here instead of filling
	// memory.
	hashes chan struct{}
}

// MaxHashes is how many password hashes run at once; HashWait is how long a
// sign-in waits for a slot before it is refused with ErrBusy.
const (
	MaxHashes = 2
	HashWait  = 3 * time.Second
)

// ErrBusy refuses a sign-in while MaxHashes others are being checked.
var ErrBusy = errors.New("Too many sign-ins at once: try again in a few seconds.")

// New makes a Service on st.
func New(st *store.Store, logger *slog.Logger) *Service {
	return &Service{st: st, logger: logger, now: time.Now, hashes: make(chan struct{}, MaxHashes)}
}

// hashSlot waits for one of the MaxHashes slots, at most HashWait, and
// returns the function that gives it back.
func (s *Service) hashSlot(ctx context.Context) (func(), error) {
	t := time.NewTimer(HashWait)
	defer t.Stop()
	select {
	case s.hashes <- struct{}{}:
		return func() { <-s.hashes }, nil
	case <-t.C:
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// NewToken makes a random token with prefix: 160 bits in lowercase base32.
func NewToken(prefix string) string {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // never fails on Linux
	}
	return prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// Hash is how every token is kept: its SHA-256.
func Hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// InstallID returns this install's ID, made on first use; labels on backends
// carry it.
func (s *Service) InstallID(ctx context.Context) (string, error) {
	id, err := s.st.InstallID(ctx, s.st.Pool, "in"+NewToken("")[:12])
	if err != nil {
		return "", fmt.Errorf("install ID: %w", err)
	}
	return id, nil
}

// Bootstrap makes sure the owner can sign in: with password set, it becomes
// the owner's password (the environment wins over an earlier one); with none
// and no owner yet, it returns a one-time set-up link's token to print.
func (s *Service) Bootstrap(ctx context.Context, password string) (setupToken string, err error) {
	if password != "" {
		current, herr := s.st.OwnerPasswordHash(ctx, s.st.Pool)
		switch {
		case errors.Is(herr, pgx.ErrNoRows):
		case herr != nil:
			return "", fmt.Errorf("read owner: %w", herr)
		default:
			if ok, _ := CheckPassword(current, password); ok {
				return "", nil
			}
		}
		h, herr := HashPassword(password)
		if herr != nil {
			return "", fmt.Errorf("BOXSNAP_PASSWORD: %w", herr)
		}
		if err := s.st.SetOwnerPassword(ctx, s.st.Pool, h); err != nil {
			return "", fmt.Errorf("set owner password: %w", err)
		}
		s.logger.Info("the owner's password was set from BOXSNAP_PASSWORD")
		return "", nil
	}
	exists, err := s.st.OwnerExists(ctx, s.st.Pool)
	if err != nil {
		return "", fmt.Errorf("read owner: %w", err)
	}
	if exists {
		return "", nil
	}
	token := NewToken(SetupPrefix)
	if err := s.st.CreateSetupLink(ctx, s.st.Pool, db.CreateSetupLinkParams{TokenHash: Hash(token), ExpiresAt: s.now().Add(SetupLinkLifetime)}); err != nil {
		return "", fmt.Errorf("make set-up link: %w", err)
	}
	return token, nil
}

// OwnerExists reports whether the owner's password is set: before it is,
// only the one-time link printed at start leads in.
func (s *Service) OwnerExists(ctx context.Context) (bool, error) {
	ok, err := s.st.OwnerExists(ctx, s.st.Pool)
	if err != nil {
		return false, fmt.Errorf("read owner: %w", err)
	}
	return ok, nil
}

// SetupLinkUsable reports whether a set-up link's token can still be used.
func (s *Service) SetupLinkUsable(ctx context.Context, token string) (bool, error) {
	ok, err := s.st.SetupLinkUsable(ctx, s.st.Pool, Hash(token))
	if err != nil {
		return false, fmt.Errorf("read set-up link: %w", err)
	}
	return ok, nil
}

// UseSetupLink sets the owner's password through a one-time link: it works
// once, only while no owner exists, and signs the owner in.
func (s *Service) UseSetupLink(ctx context.Context, token, password, userAgent string) (session string, err error) {
	done, err := s.hashSlot(ctx)
	if err != nil {
		return "", err
	}
	hash, err := HashPassword(password)
	done()
	if err != nil {
		return "", err
	}
	err = store.InTx(ctx, s.st.Pool, func(tx pgx.Tx) error {
		if _, err := s.st.UseSetupLink(ctx, tx, Hash(token)); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrLinkUsed
			}
			return fmt.Errorf("use set-up link: %w", err)
		}
		made, err := s.st.CreateOwnerIfNone(ctx, tx, hash)
		if err != nil {
			return fmt.Errorf("set owner password: %w", err)
		}
		if made == 0 {
			return ErrLinkUsed
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	s.logger.Info("the owner's password was set through the one-time link")
	return s.newSession(ctx, userAgent)
}

// SignIn checks the owner's password and starts a session.
func (s *Service) SignIn(ctx context.Context, password, userAgent string) (session string, err error) {
	hash, err := s.st.OwnerPasswordHash(ctx, s.st.Pool)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return "", ErrNoOwner
		}
		return "", fmt.Errorf("read owner: %w", err)
	}
	done, err := s.hashSlot(ctx)
	if err != nil {
		return "", err
	}
	ok, err := CheckPassword(hash, password)
	done()
	if err != nil {
		return "", err
	}
	if !ok {
		return "", ErrWrongPassword
	}
	return s.newSession(ctx, userAgent)
}

func (s *Service) newSession(ctx context.Context, userAgent string) (string, error) {
	token := NewToken(SessionPrefix)
	if len(userAgent) > 200 {
		userAgent = userAgent[:200]
	}
	if err := s.st.CreateSession(ctx, s.st.Pool, db.CreateSessionParams{TokenHash: Hash(token), ExpiresAt: s.now().Add(SessionLifetime), UserAgent: userAgent}); err != nil {
		return "", fmt.Errorf("start session: %w", err)
	}
	return token, nil
}

// CheckSession reports whether a session token is signed in, and extends it.
func (s *Service) CheckSession(ctx context.Context, token string) error {
	if !strings.HasPrefix(token, SessionPrefix) {
		return ErrNoSession
	}
	_, err := s.st.TouchSession(ctx, s.st.Pool, db.TouchSessionParams{TokenHash: Hash(token), ExpiresAt: s.now().Add(SessionLifetime)})
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNoSession
	}
	if err != nil {
		return fmt.Errorf("check session: %w", err)
	}
	return nil
}

// SignOut ends a session.
func (s *Service) SignOut(ctx context.Context, token string) error {
	if err := s.st.DeleteSession(ctx, s.st.Pool, Hash(token)); err != nil {
		return fmt.Errorf("sign out: %w", err)
	}
	return nil
}

// CreateAPIToken makes a personal API token for the CLI. The token is
// returned once; only its hash is kept.
func (s *Service) CreateAPIToken(ctx context.Context, name string) (id, token string, err error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 60 {
		return "", "", errors.New("A token's name is 1 to 60 characters.")
	}
	token = NewToken(APITokenPrefix)
	id = "tk" + NewToken("")[:12]
	if err := s.st.CreateAPIToken(ctx, s.st.Pool, db.CreateAPITokenParams{ID: id, Name: name, TokenHash: Hash(token)}); err != nil {
		return "", "", fmt.Errorf("make API token: %w", err)
	}
	return id, token, nil
}

// APIToken is a personal API token as listed (never its secret).
type APIToken struct {
	ID         string
	Name       string
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// ListAPITokens lists the owner's live tokens.
func (s *Service) ListAPITokens(ctx context.Context) ([]APIToken, error) {
	rows, err := s.st.ListAPITokens(ctx, s.st.Pool)
	if err != nil {
		return nil, fmt.Errorf("list API tokens: %w", err)
	}
	out := make([]APIToken, len(rows))
	for i, r := range rows {
		out[i] = APIToken(r)
	}
	return out, nil
}

// RevokeAPIToken revokes a token by its ID.
func (s *Service) RevokeAPIToken(ctx context.Context, id string) error {
	if err := s.st.RevokeAPIToken(ctx, s.st.Pool, id); err != nil {
		return fmt.Errorf("revoke API token: %w", err)
	}
	return nil
}

// CheckOwnerToken reports whether token is a live personal API token.
func (s *Service) CheckOwnerToken(ctx context.Context, token string) (bool, error) {
	if !strings.HasPrefix(token, APITokenPrefix) {
		return false, nil
	}
	_, err := s.st.OwnerTokenByHash(ctx, s.st.Pool, Hash(token))
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check API token: %w", err)
	}
	return true, nil
}

// DeleteExpired removes expired sessions and set-up links; housekeeping
// calls it.
func (s *Service) DeleteExpired(ctx context.Context) (int64, error) {
	n, err := s.st.DeleteExpired(ctx, s.st.Pool)
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return n, nil
}

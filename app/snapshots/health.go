package snapshots

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// DatabasePingTimeout bounds a health check's ping of the database.
const DatabasePingTimeout = 2 * time.Second

// quoted is a name in quotes in the server's words.
var quoted = regexp.MustCompile(`"[^"]*"`)

// DatabaseDown pings the database, within DatabasePingTimeout, and answers
// "" when it answers, else why not in words that hold no secret: never the
// connection string, its host, user or database (pgx's connect errors name
// them), only the server's own message or the system's.
func (s *Service) DatabaseDown(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, DatabasePingTimeout)
	defer cancel()
	err := s.st.Pool.Ping(ctx)
	if err == nil {
		return ""
	}
	var pgErr *pgconn.PgError
	var errno syscall.Errno
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return DatabaseDownWords(noAnswerWithinWords(DatabasePingTimeout))
	case errors.As(err, &pgErr):
		// The server's words name what they are about in quotes (the
		// database, the user): left out.
		return DatabaseDownWords(strings.Join(strings.Fields(quoted.ReplaceAllString(pgErr.Message, "")), " "))
	case errors.As(err, &errno):
		return DatabaseDownWords(errno.Error())
	}
	return DatabaseDownWords(itsConnectionFailedWords)
}

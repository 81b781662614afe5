package snapshots

import "context"

// PingDatabase asks the database for an answer, as /healthz does: nil when
// it answers, else the driver's error, which may name the connection's
// host, user and database (app/web says why in words that hold no secret).
func (s *Service) PingDatabase(ctx context.Context) error {
	return s.st.Pool.Ping(ctx)
}

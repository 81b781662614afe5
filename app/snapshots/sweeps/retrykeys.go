package sweeps

import (
	"context"
	"fmt"
	"time"
)

// forgetRetryKeys forgets the retry keys made before before: the agent
// tools' answers kept under one, and the request keys of operations that
// ended before then (the operations themselves stay, as history). A
// running operation keeps its key, so a retry while it runs still finds
// it. It answers how many of each it forgot.
func (s *Sweeps) forgetRetryKeys(ctx context.Context, before time.Time) (answers, keys int64, err error) {
	if answers, err = s.st.SweepToolAnswersOld(ctx, s.st.Pool, before); err != nil {
		return 0, 0, fmt.Errorf("housekeeping: retry keys' answers: %w", err)
	}
	if keys, err = s.st.SweepOpRequestKeysOld(ctx, s.st.Pool, &before); err != nil {
		return answers, 0, fmt.Errorf("housekeeping: operations' request keys: %w", err)
	}
	return answers, keys, nil
}

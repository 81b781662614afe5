package operations

import (
	"context"
	"encoding/json"
	"fmt"
)

// EndWith ends op, of this kind, in state with its typed result, its words
// and what boxsnap then observed: a runner that ends its operation itself
// (a failed one may answer what it did, as a reset that undid itself)
// records the same R the API and the web read back through Result.
func (k *Kind[P, R]) EndWith(ctx context.Context, op *Operation, state string, result R, words, observed string) error {
	return endWith(ctx, k.e, op, state, result, words, observed)
}

// endWith ends op with its kind's typed result, written as the JSON Result
// reads back; the engine records no result of any other type.
func endWith[R any](ctx context.Context, e *Engine, op *Operation, state string, result R, words, observed string) error {
	res, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("end operation %s: %w", op.ID, err)
	}
	return e.finish(ctx, op, state, res, words, observed)
}

package operations

import "context"

// EndWith ends op, of this kind, in state with its typed result, its words
// and what boxsnap then observed: a runner that ends its operation itself
// (a failed one may answer what it did, as a reset that undid itself)
// records the same R the API and the web read back through Result.
func (k *Kind[P, R]) EndWith(ctx context.Context, op *Operation, state string, result R, words, observed string) error {
	return endWith(ctx, k.e, op, state, result, words, observed)
}

package snapshots

import "context"

// ReadOnce runs fn within one read of the records (store.ReadOnce): every
// record read made with fn's context, by the kernel or a seam, sees the
// rows of one moment, so a page drawn from them never disagrees with
// itself.
func (s *Kernel) ReadOnce(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.st.ReadOnce(ctx, fn)
}

// Follow subscribes to the boxes' changes, in every process (an operation
// admitted or ended, a logged change, an edit): the channel receives the
// changed box's ID. The process's followers share one LISTEN connection;
// past operations.FollowMax, Follow refuses. stop ends the subscription.
func (s *Service) Follow(ctx context.Context) (<-chan string, func(), error) {
	return s.ops.Follow(ctx)
}

package docker

import (
	"bytes"
	"context"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/docker/boxfiles"
)

var _ providers.Straightener = (*Backend)(nil)

// SetStraight writes the box's access file, /.boxsnap/env, as the box holds
// it now: a restore put back the one of the snapshot's time. It answers
// what it changed. In a restore it runs before the swap: the container it
// writes is the one the swap will start (named -next) where there is one,
// else the box's own. The file goes through the archive endpoint (boxfiles):
// a .boxsnap the box made a link (or a file) is replaced by a real folder,
// never followed, and both are given to the box's user.
func (b *Backend) SetStraight(ctx context.Context, g providers.Guest, a providers.Access) ([]string, error) {
	name := nextName(g.Ref)
	c, ok, err := b.inspect(ctx, name)
	if err == nil && !ok {
		name = g.Ref
		c, err = b.mustInspect(ctx, g)
	}
	if err != nil {
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	want := providers.AccessText(a)
	if have, err := b.ReadMarker(ctx, name, boxfiles.AccessFile, int64(len(want)), "the access file holds"); err == nil && bytes.Equal(have, want) {
		return nil, nil
	}
	if err := b.WriteMarker(ctx, c, name, boxfiles.AccessFile, want); err != nil {
		return nil, fmt.Errorf("set %s straight: %w", g.Ref, err)
	}
	return []string{providers.AccessFileWords}, nil
}

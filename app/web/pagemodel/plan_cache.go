package pagemodel

import (
	"context"
	"sync"
	"time"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// planCacheFor is how long a box's plan is reused by the rows and the tab's
// line: a plan reads the backend live, and a tab of many rows
// must not ask it again for each. A dialog always reads a fresh plan.
const planCacheFor = 5 * time.Second

// PlanCache keeps each box's plan, for a take or for one snapshot, for
// planCacheFor.
type PlanCache struct {
	mu    sync.Mutex
	plans map[string]cachedPlan
}

type cachedPlan struct {
	plan providers.SnapshotPlan
	err  error
	at   time.Time
}

// boxPlan is b's plan for a take, read at most every planCacheFor.
func (c *PlanCache) boxPlan(ctx context.Context, core *snapshots.Service, b *snapshots.Box) (providers.SnapshotPlan, error) {
	return c.snapshotPlan(ctx, core, b, "")
}

// snapshotPlan is b's plan for snapshot ref (a take's when ref is ""),
// read at most every planCacheFor.
func (c *PlanCache) snapshotPlan(ctx context.Context, core *snapshots.Service, b *snapshots.Box, ref string) (providers.SnapshotPlan, error) {
	key := b.ID + "/" + ref
	now := time.Now()
	c.mu.Lock()
	if p, ok := c.plans[key]; ok && now.Sub(p.at) < planCacheFor {
		c.mu.Unlock()
		return p.plan, p.err
	}
	c.mu.Unlock()
	_, _, plan, err := core.Plan(ctx, snapshots.Owner(), b.ID, ref)
	if ctx.Err() != nil {
		return plan, err // a cancelled request's answer is not kept
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.plans == nil {
		c.plans = map[string]cachedPlan{}
	}
	for id, p := range c.plans {
		if now.Sub(p.at) >= planCacheFor {
			delete(c.plans, id)
		}
	}
	c.plans[key] = cachedPlan{plan: plan, err: err, at: now}
	return plan, err
}

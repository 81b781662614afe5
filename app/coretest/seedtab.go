package coretest

import (
	"context"
	"fmt"
	"testing"
)

// SeedTab makes threads, boxes and snapshots straight in the database, with
// every kind of row the tab's filters tell apart: two backends and hosts,
// released boxes (one with a live box's name), notes, agents' and the
// person's, kept ones (some ending within 7 days), undos (one kept), device
// and memory snapshots, failed takes, sizes unknown, prices per day and per
// month, and ties in every sort's key.
func SeedTab(t testing.TB, e *Env, boxes, snaps int) {
	t.Helper()
	ctx := context.Background()
	threads := max(boxes/10, 3)
	stmts := []string{
		`INSERT INTO backends (id, kind, label) VALUES ('pve', 'proxmox', 'Proxmox') ON CONFLICT DO NOTHING`,
		fmt.Sprintf(`INSERT INTO threads (id, title, token_hash) SELECT 'th' || lpad(i::text, 12, '0'),
		   CASE WHEN i = 2 THEN 'Fix the Sign-in flow' ELSE 'Thread ' || i END, decode(md5(i::text), 'hex') FROM generate_series(1, %d) i`, threads),
		fmt.Sprintf(`INSERT INTO boxes (id, name, kind, thread_id, backend_id, host, guest_ref, state, released_at, presence)
		 SELECT 'bx' || lpad(i::text, 12, '0'),
		        CASE WHEN i = 5 THEN 'box-00004' ELSE 'box-' || lpad(i::text, 5, '0') END, 'linux',
		        CASE WHEN i %% 2 = 0 THEN 'th' || lpad((i %% %[2]d + 1)::text, 12, '0') END,
		        CASE WHEN i %% 3 = 0 THEN 'pve' ELSE 'local' END, CASE WHEN i %% 3 = 0 THEN 'pve-' || (i %% 2 + 1) ELSE '' END,
		        'g' || i, CASE WHEN i %% 9 = 5 THEN 'released' ELSE 'ready' END, CASE WHEN i %% 9 = 5 THEN now() END,
		        CASE WHEN i = 7 THEN jsonb_build_object('workspaces', jsonb_build_array(jsonb_build_object('thread', 'th' || lpad('3', 12, '0'), 'working', true, 'runsOn', true)))
		             ELSE '{}'::jsonb END
		 FROM generate_series(1, %[1]d) i`, boxes, threads),
		fmt.Sprintf(`INSERT INTO snapshots (id, box_id, box_name, box_kind, backend_id, host, name, note, taken_at, by_kind, by_thread_id,
		        size_bytes, size_meaning, owner_kind, owner_thread_id, state, kept_until, undo_of, scope, holds, price)
		 SELECT 'sn' || lpad(i::text, 12, '0'), 'bx' || lpad((i %% %[2]d + 1)::text, 12, '0'), 'box',
		        'linux', 'local', '', CASE WHEN i %% 17 = 0 THEN 'Snap_100%% ' || i ELSE 'snapshot ' || i END,
		        CASE WHEN i %% 7 = 0 THEN 'before the Migration' END,
		        timestamptz '2026-11-30 12:00:00+00' - ((i %% 97) || ' minutes')::interval,
		        CASE WHEN i %% 3 = 0 THEN 'agent' WHEN i %% 5 = 0 THEN 'cli' ELSE 'owner' END,
		        CASE WHEN i %% 3 = 0 THEN 'th' || lpad(((i %% %[2]d + 1) %% %[3]d + 1)::text, 12, '0') END,
		        CASE WHEN i %% 10 = 0 THEN NULL ELSE (i %% 13) * 1000000000::bigint END, 'own',
		        CASE WHEN i %% 4 = 0 THEN 'thread' ELSE 'person' END,
		        CASE WHEN i %% 4 = 0 THEN 'th' || lpad(((i %% %[2]d + 1) %% %[3]d + 1)::text, 12, '0') END,
		        CASE WHEN i %% 19 = 0 THEN 'failed' ELSE 'ready' END,
		        CASE WHEN i %% 11 = 0 THEN timestamptz '2026-11-30 12:00:00+00' + interval '20 days'
		             WHEN i %% 13 = 0 THEN timestamptz '2026-11-30 12:00:00+00' + interval '3 days' END,
		        CASE WHEN i %% 8 = 0 THEN 'op' || i END,
		        CASE WHEN i %% 23 = 0 THEN 'device' ELSE 'box' END,
		        CASE WHEN i %% 6 = 0 THEN 'disk-and-memory' ELSE 'disk' END,
		        CASE WHEN i %% 29 = 0 THEN '{"amount": 0.056, "currency": "USD", "per": "day", "known": true}'::jsonb
		             WHEN i %% 31 = 0 THEN jsonb_build_object('amount', i %% 5, 'currency', 'EUR', 'per', 'month', 'known', true) END
		 FROM generate_series(1, %[1]d) i`, snaps, boxes, threads),
		`ANALYZE threads, boxes, snapshots`,
	}
	for _, q := range stmts {
		if _, err := e.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
}

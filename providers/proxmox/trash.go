package proxmox

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/boxsnap/boxsnap/providers"
)

// trashAside is what TrashGuest sets aside: whether the guest started at
// its node's boot.
type trashAside struct {
	Onboot bool `json:"onboot"`
}

// TrashGuest makes a stopped guest inert while its box is in the trash, as an
// earlier guest is: onboot off and every link down, so it neither starts at
// the node's next boot nor answers on its addresses. Its disk stays on its
// storage, and counts in the storage's room as any guest's does. It keeps its
// MAC addresses and SMBIOS: it is the same box if restored.
func (b *Backend) TrashGuest(ctx context.Context, g providers.Guest) (json.RawMessage, error) {
	conf, err := b.readConfig(ctx, g, "")
	if err != nil {
		return nil, err
	}
	aside := trashAside{Onboot: str(conf.raw["onboot"]) == "1"}
	params := map[string]any{"onboot": 0, "digest": str(conf.raw["digest"])}
	for _, k := range netKeys(conf.raw) {
		params[k] = withLink(str(conf.raw[k]), true)
	}
	if _, err := b.api.put(ctx, guestPath(g)+"/config", params); err != nil {
		if le := lockError(g, err.Error()); le != nil {
			return nil, le
		}
		return nil, fmt.Errorf("put %s in the trash: %w", g.Ref, err)
	}
	raw, _ := json.Marshal(aside)
	return raw, nil
}

// UntrashGuest brings a guest restored from the trash back: its links up,
// and onboot as it was before.
func (b *Backend) UntrashGuest(ctx context.Context, g providers.Guest, raw json.RawMessage) error {
	var aside trashAside
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &aside); err != nil {
			return fmt.Errorf("restore %s from the trash: %w", g.Ref, err)
		}
	}
	return b.ArmFork(ctx, g, aside.Onboot)
}

package proxmox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// lifecycle makes, powers and deletes guests: a clone into boxsnap's range
// of VMIDs, a start or a stop, a destroy, and the status they are read by.
type lifecycle struct {
	*reader
}

// nextVMID is the lowest free VMID of boxsnap's range.
func (b *lifecycle) nextVMID(ctx context.Context) (int, error) {
	guests, err := b.resources(ctx)
	if err != nil {
		return 0, err
	}
	used := map[int]bool{}
	for _, r := range guests {
		used[r.VMID] = true
	}
	for id := b.cfg.VMIDFirst; id <= b.cfg.VMIDLast; id++ {
		if !used[id] {
			return id, nil
		}
	}
	return 0, &providers.RefusedError{Why: fmt.Sprintf("boxsnap's VMIDs %d to %d are all used on %s.", b.cfg.VMIDFirst, b.cfg.VMIDLast, b.cfg.ID)}
}

// clone clones src (from snapshot snapname when set) into a new VMID of
// boxsnap's range and waits for it.
func (b *lifecycle) clone(ctx context.Context, src providers.Guest, snapname, name, description string, full bool, rec providers.Recorder) (providers.Guest, error) {
	id, err := b.nextVMID(ctx)
	if err != nil {
		return providers.Guest{}, err
	}
	params := map[string]any{"newid": id}
	if full {
		params["full"] = 1
	}
	if snapname != "" {
		params["snapname"] = snapname
	}
	if description != "" {
		params["description"] = description
	}
	if b.cfg.Pool != "" {
		params["pool"] = b.cfg.Pool
	}
	if name != "" {
		if src.Kind == KindLXC {
			params["hostname"] = name
		} else {
			params["name"] = name
		}
	}
	upid, err := b.api.post(ctx, guestPath(src)+"/clone", params)
	if err != nil {
		return providers.Guest{}, fmt.Errorf("clone %s: %w", src.Ref, err)
	}
	if _, err := b.api.wait(ctx, upid, rec); err != nil {
		return providers.Guest{}, fmt.Errorf("clone %s into %d: %w", src.Ref, id, err)
	}
	return providers.Guest{Backend: b.cfg.ID, Kind: src.Kind, Host: src.Host, Ref: strconv.Itoa(id), Generation: 1}, nil
}

// labelledGuest finds the guest of boxsnap's range whose description is
// label, once its clone ended: one a clone still makes is waited for (a
// restart's, in place); one the clone's failure removed is not found.
func (b *lifecycle) labelledGuest(ctx context.Context, label string) (providers.Guest, bool, error) {
	guests, err := b.resources(ctx)
	if err != nil {
		return providers.Guest{}, false, err
	}
	for _, r := range guests {
		if !b.inRange(r.VMID) || r.Template == 1 {
			continue
		}
		g := providers.Guest{Backend: b.cfg.ID, Kind: kindOf(r), Host: r.Node, Ref: strconv.Itoa(r.VMID), Generation: 1}
		conf, err := b.readConfig(ctx, g, "")
		if err != nil || str(conf.raw["description"]) != label {
			continue
		}
		if conf.Lock == "create" || conf.Lock == "clone" {
			if err := b.waitClones(ctx, g); err != nil {
				return g, false, err
			}
			if _, err := b.readConfig(ctx, g, ""); errors.Is(err, providers.ErrNotFound) {
				return g, false, nil
			} else if err != nil {
				return g, false, err
			}
		}
		return g, true, nil
	}
	return providers.Guest{}, false, nil
}

func guestLabel(box providers.BoxIdentity) string {
	return fmt.Sprintf("boxsnap install %s box %s", box.Install, box.ID)
}

var macRE = regexp.MustCompile(`(?i)([0-9a-f]{2}:){5}[0-9a-f]{2}`)

// netKeys are the guest's network interfaces in its config.
func netKeys(raw map[string]any) []string {
	var keys []string
	for k := range raw {
		if strings.HasPrefix(k, "net") {
			if _, err := strconv.Atoi(k[3:]); err == nil {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func withLink(v string, down bool) string {
	parts := strings.Split(v, ",")
	out := parts[:0]
	for _, p := range parts {
		if !strings.HasPrefix(p, "link_down=") {
			out = append(out, p)
		}
	}
	if down {
		out = append(out, "link_down=1")
	}
	return strings.Join(out, ",")
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// destroy stops and deletes a guest and waits for it, recording each task
// with rec (a recorder that snoozes answers providers.ErrTaskPending at
// once, and the caller calls destroy again once the task ended).
func (b *lifecycle) destroy(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
	// A guest stopped already (by a stop called again after its task) is
	// not stopped again: QEMU would start one more stop task each time.
	if st, err := b.Status(ctx, g); err != nil || st.Running {
		if err := b.power(ctx, g, "stop", rec); err != nil && !errors.Is(err, providers.ErrNotFound) {
			return err
		}
	}
	if err := b.api.del(ctx, guestPath(g)+"?purge=1"); err != nil {
		if errors.Is(err, providers.ErrNotFound) {
			return nil
		}
		if le := lockError(g, err.Error()); le != nil {
			return le
		}
		return fmt.Errorf("delete %s: %w", g.Ref, err)
	}
	typ := "qmdestroy"
	if g.Kind == KindLXC {
		typ = "vzdestroy"
	}
	upid, err := b.delTask(ctx, g, typ)
	if err != nil {
		return err
	}
	_, err = b.api.wait(ctx, upid, rec)
	return err
}

// Status reads whether the guest exists and runs, and its size.
func (b *lifecycle) Status(ctx context.Context, g providers.Guest) (providers.GuestStatus, error) {
	var st struct {
		Status  string  `json:"status"`
		MaxMem  int64   `json:"maxmem"`
		MaxDisk int64   `json:"maxdisk"`
		CPUs    float64 `json:"cpus"`
	}
	err := b.api.get(ctx, guestPath(g)+"/status/current", &st)
	if errors.Is(err, providers.ErrNotFound) {
		return providers.GuestStatus{}, nil
	}
	if err != nil {
		return providers.GuestStatus{}, err
	}
	return providers.GuestStatus{Exists: true, Running: st.Status == "running",
		Size: &providers.BoxSize{Cores: int(st.CPUs), MemoryBytes: st.MaxMem, DiskBytes: st.MaxDisk}}, nil
}

// power posts a power action and waits for its task. LXC answers at once
// that a container is already in that state; that is done, not an error.
func (b *lifecycle) power(ctx context.Context, g providers.Guest, action string, rec providers.Recorder) error {
	upid, err := b.api.post(ctx, guestPath(g)+"/status/"+action, nil)
	if err != nil {
		if strings.Contains(err.Error(), "already running") || strings.Contains(err.Error(), "not running") {
			return nil
		}
		if le := lockError(g, err.Error()); le != nil {
			return le
		}
		return fmt.Errorf("%s %s: %w", action, g.Ref, err)
	}
	if _, err := b.api.wait(ctx, upid, rec); err != nil {
		var te *TaskError
		if errors.As(err, &te) {
			if strings.Contains(te.ExitStatus, "already running") {
				return nil
			}
			if le := lockError(g, te.ExitStatus); le != nil {
				return le
			}
		}
		return fmt.Errorf("%s %s: %w", action, g.Ref, err)
	}
	return nil
}

func (b *lifecycle) start(ctx context.Context, g providers.Guest, rec providers.Recorder) error {
	return b.power(ctx, g, "start", rec)
}

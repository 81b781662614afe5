package sweeps

import (
	"context"
	"testing"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
)

// oneHostSnap is a backend's snapshots side that answers OneHost as told.
type oneHostSnap struct {
	providers.Backend
	one bool
}

func (o oneHostSnap) OneHost() bool { return o.one }

// TestElsewhereByOwnerOnOneHostBackends: on host-a, a record of a local
// box is another host's by the host it names; of a one-host backend whose
// records name none (QEMU, a local Docker engine), by its box's owner, and
// a box no host owns yet is judged here only when no other host runs
// boxsnap; of a backend every host reaches, never.
func TestElsewhereByOwnerOnOneHostBackends(t *testing.T) {
	t.Parallel()
	s := &Sweeps{host: "host-a"}
	a, b := "host-a", "host-b"
	local := snapshots.Backend{ID: "local", Kind: "local", Snap: oneHostSnap{one: true}}
	qemu := snapshots.Backend{ID: "qemu", Kind: "qemu", Snap: oneHostSnap{one: true}}
	remote := snapshots.Backend{ID: "docker", Kind: "docker", Snap: oneHostSnap{one: false}}
	crowd := &owners{of: map[string]*string{"mine": &a, "theirs": &b, "none": nil}}
	alone := &owners{of: crowd.of, alone: true}
	for _, c := range []struct {
		be        snapshots.Backend
		host, box string
		o         *owners
		want      bool
	}{
		{local, "host-b", "theirs", nil, true},
		{local, "host-a", "theirs", nil, false}, // a local record says its host
		{local, "", "theirs", nil, false},
		{qemu, "", "mine", crowd, false},
		{qemu, "", "theirs", crowd, true},
		{qemu, "", "none", crowd, true},
		{qemu, "", "none", alone, false},
		{qemu, "", "unknown", crowd, true},
		{remote, "docker.example", "theirs", nil, false},
	} {
		if got := s.elsewhere(c.be, c.host, c.box, c.o); got != c.want {
			t.Errorf("elsewhere(%s, %q, %s) = %v, want %v", c.be.ID, c.host, c.box, got, c.want)
		}
	}
	// Owners are read for a one-host backend whose records name no host
	// alone: none for the local backend nor one every host reaches.
	for _, be := range []snapshots.Backend{local, remote} {
		if o, err := s.ownersOf(context.Background(), be); o != nil || err != nil {
			t.Errorf("ownersOf(%s) = %v, %v; want none", be.ID, o, err)
		}
	}
	if (&Sweeps{}).elsewhere(qemu, "", "theirs", crowd) {
		t.Errorf("a process told no host judges another host's box elsewhere")
	}
}

package proxmox

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// Defaults of Config.
const (
	// DefaultPollEvery is how often a task's status is read while boxsnap
	// waits for it: Proxmox finishes an LXC snapshot in about 0.7 s, which
	// the client's own 2 s wait would round up to 2 s.
	DefaultPollEvery = 150 * time.Millisecond
	// DefaultTaskTimeout bounds one wait for one task.
	DefaultTaskTimeout = 30 * time.Minute
	// DefaultRequestTimeout bounds one HTTP request.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultVMIDFirst and DefaultVMIDLast are boxsnap's range of VMIDs for
	// the guests it makes (clones, held copies).
	DefaultVMIDFirst = 9000
	DefaultVMIDLast  = 9999
)

// Config configures a Proxmox backend. The token's secret comes from the
// environment or a file, never from settings stored in the database.
type Config struct {
	// ID is the backend's ID in settings, such as "pve-lab".
	ID string
	// URL is the API's base, "https://pve.example:8006" (with or without
	// "/api2/json"). It must be https.
	URL string
	// TokenID is "user@realm!tokenid"; TokenSecret its secret.
	TokenID     string
	TokenSecret string
	// CAFile is a PEM file of the certificate(s) to trust; empty means the
	// system's roots. CAPool, when set, is used instead (tests).
	CAFile string
	CAPool *x509.CertPool
	// InsecureSkipTLSVerify turns certificate verification off. Never the
	// default; only a setting of that name turns it on.
	InsecureSkipTLSVerify bool
	// Install is this install's ID, written on every label.
	Install string
	// Pool is the Proxmox pool boxsnap's guests go in; empty for none.
	Pool string
	// VMIDFirst and VMIDLast bound the VMIDs boxsnap gives the guests it
	// makes; zero means DefaultVMIDFirst and DefaultVMIDLast.
	VMIDFirst, VMIDLast int
	// PollEvery is how often a task's status is read; zero means
	// DefaultPollEvery.
	PollEvery time.Duration
	// TaskTimeout bounds one wait for one task; zero means
	// DefaultTaskTimeout.
	TaskTimeout time.Duration
	// ZFSOrderForLiveChecksOnly turns on ZFS restores (stop, held copy of the
	// stopped guest, rollback to the newest, start). Off by default: ZFS
	// restores ship off until a live check on a ZFS node shows the restore,
	// its held-copy undo and the swap back leave every guest and snapshot
	// accounted for; it exists for live checks only.
	ZFSOrderForLiveChecksOnly bool
	// Logger; nil discards.
	Logger *slog.Logger
}

// guestType is Proxmox's type for a kind of box.
func guestType(kind string) string {
	if kind == KindLXC {
		return "lxc"
	}
	return "qemu"
}

// Kinds of box this backend runs.
const (
	KindLXC         = "lxc"
	KindQEMU        = "qemu"
	KindQEMUWindows = "qemu-windows"
)

func guestPath(g providers.Guest) string {
	return fmt.Sprintf("/nodes/%s/%s/%s", g.Host, guestType(g.Kind), g.Ref)
}

// unlockWords is the host's command that clears a guest's lock: a lock is the
// host's to clear, never boxsnap's.
func unlockWords(g providers.Guest) string {
	tool := "qm"
	if g.Kind == KindLXC {
		tool = "pct"
	}
	return fmt.Sprintf("Run %s unlock %s on %s", tool, g.Ref, g.Host)
}

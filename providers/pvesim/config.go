package pvesim

import (
	"log/slog"
	"time"
)

// Defaults of Config, chosen so that tests are quick and a person watching
// the demo still sees a task running for a moment.
const (
	// DefaultTaskDuration is how long a task runs on the simulator's clock
	// unless Config.TaskDuration or Config.TaskDurations says otherwise.
	DefaultTaskDuration = 150 * time.Millisecond
	// DefaultListenAddr is where `boxsnap pvesim` listens: Proxmox VE's own
	// port, on the loopback only.
	DefaultListenAddr = "127.0.0.1:8006"
	// ticketLifetime is how long a ticket from POST /access/ticket is valid
	// (AC AccessControl.pm: $ticket_lifetime = 3600*2).
	ticketLifetime = 2 * time.Hour
	// simulatorRelease is what GET /version answers as the release, so no
	// one mistakes the simulator for a Proxmox VE.
	simulatorRelease = "9.0-pvesim"
	// simulatorVersion is the Proxmox VE version the simulator follows; the
	// Telmate client parses it as major.minor.patch.
	simulatorVersion = "9.0.10"
	// serverHeader labels every response as the simulator's
	// (HS AnyEvent.pm sends "pve-api-daemon/3.0").
	serverHeader = "pve-api-daemon/3.0 (pvesim simulator)"
)

// Config configures a simulator. The zero value is usable: a running real
// clock, short tasks, no control API, no seed.
type Config struct {
	// Logger receives one line per request (method, path, status, caller
	// without secrets). Nil discards.
	Logger *slog.Logger
	// TaskDuration is how long every task takes on the simulator's clock.
	// Zero means DefaultTaskDuration; a negative value means tasks finish at
	// the next call that looks at the state (useful with clients that poll
	// slowly, such as the Telmate client's 2 s wait).
	TaskDuration time.Duration
	// TaskDurations overrides TaskDuration per task type ("vzsnapshot",
	// "qmclone", ...). A negative value means immediate, as above.
	TaskDurations map[string]time.Duration
	// StartTime, when not zero, freezes the simulator's clock at that time:
	// it then moves only by Advance and SetTime, so tests need no sleep.
	// When zero, the clock follows the real time (plus any Advance).
	StartTime time.Time
	// AuthFailDelay delays a 401, as Proxmox does (about 3 s; AC
	// AccessControl.pm and HS AnyEvent.pm). Zero means no delay.
	AuthFailDelay time.Duration
	// Control enables the control API under /pvesim/control/.
	Control bool
	// ControlSecret is the bearer secret of the control API. Empty means
	// one is generated at New (read it with ControlSecret).
	ControlSecret string
	// Seed makes generated MAC addresses and UUIDs repeatable. Zero means
	// a random seed.
	Seed uint64
	// Realistic makes snapshot and clone tasks take about as long as they
	// were measured to on Proxmox VE: a take 0.7 s (LXC) or 1.1 s (QEMU),
	// plus about 1 s per GiB of memory for a memory snapshot; a full clone
	// 9.3 s (LXC) or 6.5 s (QEMU) per 4 GiB used. TaskDurations still wins
	// for a type it names.
	Realistic bool
}

// Task times measured on Proxmox VE, and about 1 s per GiB of memory for a
// snapshot that holds it.
const (
	realisticTakeLXC        = 700 * time.Millisecond
	realisticTakeQEMU       = 1100 * time.Millisecond
	realisticMemoryPerGiB   = time.Second
	realisticCloneLXCPer4G  = 9300 * time.Millisecond
	realisticCloneQEMUPer4G = 6500 * time.Millisecond
)

package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is everything a boxsnap process is told from outside.
type Config struct {
	// DatabaseURL is a PostgreSQL URL; empty means the embedded default: a
	// private cluster in DataDir.
	DatabaseURL string
	// DataDir holds the embedded cluster, the local backend's boxes and
	// snapshots, and the lock that keeps one serve per folder.
	DataDir string
	// Addr is the HTTP listen address.
	Addr string
	// BaseURL is the address people reach boxsnap at, used in printed links.
	// Empty means http://<Addr>.
	BaseURL string
	// TLSCert and TLSKey serve HTTPS when both are set; cookies are then
	// Secure.
	TLSCert, TLSKey string
	// Workers runs River's workers in serve; work always runs them.
	Workers bool
	// Host names the host this process runs on (the machine's hostname by
	// default): it owns the local boxes made here, and its workers run their
	// operations.
	Host string
	// Password is the owner's password; empty means a one-time link sets it.
	Password string `secret:"true"`
	// LogFormat is "auto" (text on a terminal, JSON otherwise), "text" or "json".
	LogFormat string
	// LogLevel is "debug", "info", "warn" or "error".
	LogLevel string
	// ShutdownTimeout bounds how long running jobs may take to finish after
	// SIGINT or SIGTERM before they are cancelled.
	ShutdownTimeout time.Duration
	// DatabaseWait is how long a process started on DATABASE_URL waits for
	// a database that is not up yet or restarting.
	DatabaseWait time.Duration
	// Demo seeds demo boxes on the local backend at start (make run).
	Demo bool
	// LocalRoot is the local backend's folder; empty means DataDir/local.
	LocalRoot string
	// LocalDiskImages gives each new local box a file system of its own, a
	// loop-mounted ext4 image the size of its disk bound, which bounds its
	// disk to the byte (as root, where loop mounts work); on by default.
	// Off, or where loop mounts do not work, a box's folder is part of the
	// host's file system and a watch measures it.
	LocalDiskImages bool
	// ServerURL and Token are the CLI's: where the server is, and the
	// owner's personal API token.
	ServerURL string
	Token     string `secret:"true"`

	// A Proxmox VE backend, beside the local one, when ProxmoxURL is set.
	// ProxmoxID is its ID in settings; the token's secret comes from the
	// environment or a file, never a flag. TLS is verified, against
	// ProxmoxCAFile when set; only ProxmoxInsecureSkipTLSVerify turns that
	// off. ProxmoxZFSOrderLiveChecksOnly turns ZFS restores on, for live
	// checks only: they stay off until a check on a ZFS node shows them safe.
	ProxmoxURL                    string
	ProxmoxID                     string
	ProxmoxTokenID                string
	ProxmoxTokenSecret            string `secret:"true"`
	ProxmoxCAFile                 string
	ProxmoxPool                   string
	ProxmoxInsecureSkipTLSVerify  bool
	ProxmoxZFSOrderLiveChecksOnly bool

	// A Docker Engine backend when DockerHost is set (unix://, tcp:// with
	// TLS from the three DockerTLS files, or ssh://user@host). With Demo
	// and no DockerHost, a local engine that answers is added too.
	// DockerBoxesGoWithHost is the profile of hosts whose boxes go with
	// them (Hetzner, Namespace): Keep is off there.
	DockerHost            string
	DockerID              string
	DockerTLSCA           string
	DockerTLSCert         string
	DockerTLSKey          string
	DockerNetwork         string
	DockerBoxesGoWithHost bool
	// A QEMU backend when QEMUSocket names libvirtd's unix socket; its
	// guests run under QEMUAccel: auto (KVM where it runs guests, else
	// TCG), or kvm or tcg to force one.
	QEMUSocket string
	QEMUID     string
	QEMUAccel  string
	// QEMUTemplates is the folder of the QEMU backend's box templates, one
	// folder each (qemu.LoadTemplates); empty: none.
	QEMUTemplates string

	// ContentStore keeps the local backend's snapshots in an S3 bucket
	// too, s3://bucket or s3://bucket/prefix; empty keeps them on this
	// host alone. The endpoint is host:port (HTTPS), http://host:port or
	// https://host:port; the keys come from the environment or _FILEs,
	// never a flag; ContentStoreCAFile is PEM certificates to trust.
	ContentStore          string
	ContentStoreEndpoint  string
	ContentStoreRegion    string
	ContentStoreAccessKey string `secret:"true"`
	ContentStoreSecretKey string `secret:"true"`
	ContentStoreCAFile    string
	// ContentCacheBytes bounds the local backend's content on this host
	// with a content store (the rest is fetched back when read): a size
	// when over 0; -1 keeps it all (the setting 0); 0 bounds it by
	// ContentCachePercent.
	ContentCacheBytes int64
	// ContentCachePercent, with ContentCacheBytes 0, is the bound as a
	// share of the file system holding the local backend's content, 1 to
	// MaxContentCachePercent (DefaultContentCacheSize, 25%, by default).
	ContentCachePercent int

	// ForkMaxCount is the most boxes one fork call makes (1 to
	// MaxForkMaxCount).
	ForkMaxCount int
	// RetryKeysKeptFor is how long a retry key (an agent's request ID)
	// answers its first call: housekeeping forgets a tool's kept answer
	// and an ended operation's key after it.
	RetryKeysKeptFor time.Duration

	// Intervals are how often each periodic job runs (jobs' own values by
	// default); tests shorten them.
	Intervals Intervals
}

// MaxForkMaxCount bounds the fork count's setting: a hundred boxes from
// one call is as many as a person can follow.
const MaxForkMaxCount = 100

// MinRetryKeysKeptFor bounds the retry keys' setting from below: an agent
// retries a call that timed out within minutes, and a key forgotten
// sooner would do the work twice.
const MinRetryKeysKeptFor = time.Hour

// Intervals are the periodic jobs' intervals, one a job (jobs.Intervals has
// the same fields). Sessions and set-up links are swept with housekeeping.
type Intervals struct {
	Recover, Reconcile, Outside, Room, Expiry, Trash, Housekeeping, Automatic, Thinning, Hosts, ContentSweep time.Duration
}

// MinHostsInterval bounds the hosts' interval from below: each run puts a
// run of work on every live host's queue, which ships up to 20 snapshots,
// so a shorter one only queues work that finds the last still running.
const MinHostsInterval = 5 * time.Second

// intervalSettings are the intervals' settings: variable, flag, default and
// the field each sets.
var intervalSettings = []struct {
	env, flag, def, usage string
	field                 func(*Intervals) *time.Duration
}{
	{"BOXSNAP_RECOVER_INTERVAL", "recover-interval", "30s", "how often any worker resumes the operations a dead worker left", func(i *Intervals) *time.Duration { return &i.Recover }},
	{"BOXSNAP_RECONCILE_INTERVAL", "reconcile-interval", "2m", "how often the backends' snapshots are listed against the records", func(i *Intervals) *time.Duration { return &i.Reconcile }},
	{"BOXSNAP_OUTSIDE_INTERVAL", "outside-interval", "1m", "how often restores made outside boxsnap are looked for", func(i *Intervals) *time.Duration { return &i.Outside }},
	{"BOXSNAP_ROOM_INTERVAL", "room-interval", "5m", "how often the room sweep runs", func(i *Intervals) *time.Duration { return &i.Room }},
	{"BOXSNAP_EXPIRY_INTERVAL", "expiry-interval", "10m", "how often keeps that ended are let go", func(i *Intervals) *time.Duration { return &i.Expiry }},
	{"BOXSNAP_TRASH_INTERVAL", "trash-interval", "5m", "how often boxes whose time in the trash ended are released", func(i *Intervals) *time.Duration { return &i.Trash }},
	{"BOXSNAP_HOUSEKEEPING_INTERVAL", "housekeeping-interval", "1h", "how often sessions, set-up links, old records and the box log are cleaned", func(i *Intervals) *time.Duration { return &i.Housekeeping }},
	{"BOXSNAP_AUTOMATIC_INTERVAL", "automatic-interval", "5s", "how often boxsnap looks for running boxes due an automatic snapshot (each box is asked at its backend's cadence)", func(i *Intervals) *time.Duration { return &i.Automatic }},
	{"BOXSNAP_THINNING_INTERVAL", "thinning-interval", "1m", "how often automatic history is thinned", func(i *Intervals) *time.Duration { return &i.Thinning }},
	{"BOXSNAP_HOSTS_INTERVAL", "hosts-interval", "5m", "how often each live host's own work is queued on it: shipping its snapshots from before the content store (at least 5s)", func(i *Intervals) *time.Duration { return &i.Hosts }},
	{"BOXSNAP_CONTENT_SWEEP_INTERVAL", "content-sweep-interval", "10m", "how often the content store's sweep deletes from the bucket the objects no snapshot names", func(i *Intervals) *time.Duration { return &i.ContentSweep }},
}

// Setting describes one setting for the README and --help.
type Setting struct {
	Env, Flag, Default, Usage string
}

// Settings lists every setting with its environment variable, flag and
// default; the README's table is made from the same words.
func Settings() []Setting {
	out := []Setting{
		{"DATABASE_URL", "database-url", "", "PostgreSQL URL; empty runs a private cluster in the data folder"},
		{"BOXSNAP_DATA_DIR", "data-dir", "./.data", "data folder: embedded cluster, local boxes and snapshots"},
		{"BOXSNAP_ADDR", "addr", "127.0.0.1:8080", "HTTP listen address"},
		{"BOXSNAP_BASE_URL", "base-url", "http://<addr>", "address people reach boxsnap at, for printed links"},
		{"BOXSNAP_TLS_CERT", "tls-cert", "", "certificate file; with a key, serve HTTPS and mark cookies Secure"},
		{"BOXSNAP_TLS_KEY", "tls-key", "", "private key file for the certificate"},
		{"BOXSNAP_WORKERS", "workers", "true", "run River's workers inside serve"},
		{"BOXSNAP_HOST", "host", "the machine's hostname", "the name of the host this process runs on; it owns the local boxes made here"},
		{"BOXSNAP_PASSWORD", "", "", "the owner's password (or BOXSNAP_PASSWORD_FILE); empty: a one-time link sets it"},
		{"BOXSNAP_LOG_FORMAT", "log-format", "auto", "auto (text on a terminal, JSON otherwise), text or json"},
		{"BOXSNAP_LOG_LEVEL", "log-level", "info", "debug, info, warn or error"},
		{"BOXSNAP_SHUTDOWN_TIMEOUT", "shutdown-timeout", "30s", "how long running jobs may finish after SIGINT/SIGTERM"},
		{"BOXSNAP_DEMO", "demo", "false", "seed demo boxes on the local backend"},
		{"BOXSNAP_LOCAL_ROOT", "local-root", "<data-dir>/local", "the local backend's folder"},
		{"BOXSNAP_SERVER", "server", "http://127.0.0.1:8080", "the CLI's server address"},
		{"BOXSNAP_TOKEN", "", "", "the CLI's personal API token (or BOXSNAP_TOKEN_FILE)"},
		{"BOXSNAP_PROXMOX_URL", "proxmox-url", "", "a Proxmox VE's API, https://host:8006; empty: no Proxmox backend"},
		{"BOXSNAP_PROXMOX_ID", "proxmox-id", "pve", "the Proxmox backend's ID in settings"},
		{"BOXSNAP_PROXMOX_TOKEN_ID", "proxmox-token-id", "", "the API token's ID, user@realm!tokenid"},
		{"BOXSNAP_PROXMOX_TOKEN_SECRET", "", "", "the API token's secret (or BOXSNAP_PROXMOX_TOKEN_SECRET_FILE); never printed"},
		{"BOXSNAP_PROXMOX_CA_FILE", "proxmox-ca-file", "", "PEM certificate(s) to trust for the Proxmox API; empty: the system's"},
		{"BOXSNAP_PROXMOX_POOL", "proxmox-pool", "", "the Proxmox pool boxsnap's guests go in"},
		{"BOXSNAP_PROXMOX_INSECURE_SKIP_TLS_VERIFY", "proxmox-insecure-skip-tls-verify", "false", "do not verify the Proxmox API's certificate (never by default)"},
		{"BOXSNAP_PROXMOX_ZFS_ORDER_LIVE_CHECKS_ONLY", "proxmox-zfs-order-live-checks-only", "false", "turn ZFS restores on, for live checks only"},
		{"BOXSNAP_DOCKER_HOST", "docker-host", "", "a Docker Engine: unix:///var/run/docker.sock, tcp://host:2376 (with TLS) or ssh://user@host; empty: no Docker backend"},
		{"BOXSNAP_DOCKER_ID", "docker-id", "docker", "the Docker backend's ID in settings"},
		{"BOXSNAP_DOCKER_TLS_CA", "docker-tls-ca", "", "a tcp:// engine's CA certificate (PEM)"},
		{"BOXSNAP_DOCKER_TLS_CERT", "docker-tls-cert", "", "boxsnap's client certificate for a tcp:// engine (PEM)"},
		{"BOXSNAP_DOCKER_TLS_KEY", "docker-tls-key", "", "that certificate's key (PEM)"},
		{"BOXSNAP_DOCKER_NETWORK", "docker-network", "", "the network Docker boxes join (none for none); empty: the engine's default"},
		{"BOXSNAP_DOCKER_BOXES_GO_WITH_HOST", "docker-boxes-go-with-host", "false", "the host goes with its boxes (Hetzner, Namespace): Keep is off"},
		{"BOXSNAP_QEMU_SOCKET", "qemu-socket", "", "libvirtd's unix socket, such as /run/libvirt/libvirt-sock; empty: no QEMU backend"},
		{"BOXSNAP_QEMU_ID", "qemu-id", "qemu", "the QEMU backend's ID in settings"},
		{"BOXSNAP_QEMU_ACCEL", "qemu-accel", "auto", "how QEMU runs guests: auto (KVM where /dev/kvm opens, the CPU has vmx or svm and libvirt offers kvm; else TCG), kvm (hardware virtualisation) or tcg (QEMU's own translation, slower)"},
		{"BOXSNAP_QEMU_TEMPLATES", "qemu-templates", "", "a folder of QEMU box templates, a folder each holding vmlinuz, initrd.img, disk.qcow2 and template.json; empty: none"},
		{"BOXSNAP_CONTENT_STORE", "content-store", "", "keep the local backend's snapshots in an S3 bucket too: s3://bucket or s3://bucket/prefix; empty: on this host alone"},
		{"BOXSNAP_CONTENT_STORE_ENDPOINT", "content-store-endpoint", "", "the S3 server: host:port (HTTPS), https://host:port or http://host:port"},
		{"BOXSNAP_CONTENT_STORE_REGION", "content-store-region", "us-east-1", "the bucket's region"},
		{"BOXSNAP_CONTENT_STORE_ACCESS_KEY", "", "", "the S3 access key (or BOXSNAP_CONTENT_STORE_ACCESS_KEY_FILE)"},
		{"BOXSNAP_CONTENT_STORE_SECRET_KEY", "", "", "the S3 secret key (or BOXSNAP_CONTENT_STORE_SECRET_KEY_FILE); never printed"},
		{"BOXSNAP_CONTENT_STORE_CA_FILE", "content-store-ca-file", "", "PEM certificate(s) to trust for the S3 server; empty: the system's"},
		{"BOXSNAP_CONTENT_CACHE_SIZE", "content-cache-size", DefaultContentCacheSize, "with a content store, the most content kept on this host: a share of the file system holding it, such as 25%, or a size, such as 50GiB (the rest is fetched back when read); 0: all of it"},
		{"BOXSNAP_FORK_MAX_COUNT", "fork-max-count", "10", "the most boxes one fork call makes (1 to 100)"},
		{"BOXSNAP_RETRY_KEYS_KEPT_FOR", "retry-keys-kept-for", "168h", "how long an agent's request ID answers its first call (at least 1h)"},
	}
	for _, i := range intervalSettings {
		out = append(out, Setting{i.env, i.flag, i.def, i.usage})
	}
	return out
}

// Load reads the environment, then the flags in args, which win. getenv is
// os.Getenv in production and a map in tests.
func Load(name string, args []string, getenv func(string) string, stderr io.Writer) (Config, *flag.FlagSet, error) {
	c := Config{}
	var r rawSettings
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL; empty runs a private cluster in the data folder")
	fs.StringVar(&c.DataDir, "data-dir", env("BOXSNAP_DATA_DIR", "./.data"), "data folder")
	fs.StringVar(&c.Addr, "addr", env("BOXSNAP_ADDR", "127.0.0.1:8080"), "HTTP listen address")
	fs.StringVar(&c.BaseURL, "base-url", env("BOXSNAP_BASE_URL", ""), "address people reach boxsnap at")
	fs.StringVar(&c.TLSCert, "tls-cert", env("BOXSNAP_TLS_CERT", ""), "TLS certificate file")
	fs.StringVar(&c.TLSKey, "tls-key", env("BOXSNAP_TLS_KEY", ""), "TLS private key file")
	fs.StringVar(&c.Host, "host", env("BOXSNAP_HOST", hostname()), "the name of the host this process runs on")
	r.workers = boolFlag(fs, "workers", env("BOXSNAP_WORKERS", "true"), "run River's workers inside serve (true/false)")
	fs.StringVar(&c.LogFormat, "log-format", env("BOXSNAP_LOG_FORMAT", "auto"), "auto, text or json")
	fs.StringVar(&c.LogLevel, "log-level", env("BOXSNAP_LOG_LEVEL", "info"), "debug, info, warn or error")
	r.shutdown = fs.String("shutdown-timeout", env("BOXSNAP_SHUTDOWN_TIMEOUT", "30s"), "how long running jobs may finish after a signal")
	r.dbWait = fs.String("database-wait", env("BOXSNAP_DATABASE_WAIT", "1m"), "how long a start waits for a DATABASE_URL not up yet")
	r.demo = boolFlag(fs, "demo", env("BOXSNAP_DEMO", "false"), "seed demo boxes (true/false)")
	fs.StringVar(&c.LocalRoot, "local-root", env("BOXSNAP_LOCAL_ROOT", ""), "the local backend's folder")
	r.diskImages = boolFlag(fs, "local-disk-images", env("BOXSNAP_LOCAL_DISK_IMAGES", "true"), "give each new local box a file system of its own, bounding its disk to the byte (true/false)")
	fs.StringVar(&c.ServerURL, "server", env("BOXSNAP_SERVER", "http://127.0.0.1:8080"), "the CLI's server address")
	fs.StringVar(&c.ProxmoxURL, "proxmox-url", env("BOXSNAP_PROXMOX_URL", ""), "a Proxmox VE's API, https://host:8006")
	fs.StringVar(&c.ProxmoxID, "proxmox-id", env("BOXSNAP_PROXMOX_ID", "pve"), "the Proxmox backend's ID")
	fs.StringVar(&c.ProxmoxTokenID, "proxmox-token-id", env("BOXSNAP_PROXMOX_TOKEN_ID", ""), "the API token's ID, user@realm!tokenid")
	fs.StringVar(&c.ProxmoxCAFile, "proxmox-ca-file", env("BOXSNAP_PROXMOX_CA_FILE", ""), "PEM certificate(s) to trust for the Proxmox API")
	fs.StringVar(&c.ProxmoxPool, "proxmox-pool", env("BOXSNAP_PROXMOX_POOL", ""), "the Proxmox pool boxsnap's guests go in")
	r.pveInsecure = boolFlag(fs, "proxmox-insecure-skip-tls-verify", env("BOXSNAP_PROXMOX_INSECURE_SKIP_TLS_VERIFY", "false"), "do not verify the Proxmox API's certificate (true/false)")
	r.pveZFS = boolFlag(fs, "proxmox-zfs-order-live-checks-only", env("BOXSNAP_PROXMOX_ZFS_ORDER_LIVE_CHECKS_ONLY", "false"), "turn ZFS restores on, for live checks only (true/false)")
	fs.StringVar(&c.DockerHost, "docker-host", env("BOXSNAP_DOCKER_HOST", ""), "a Docker Engine: unix://, tcp:// (with TLS) or ssh://user@host")
	fs.StringVar(&c.DockerID, "docker-id", env("BOXSNAP_DOCKER_ID", "docker"), "the Docker backend's ID")
	fs.StringVar(&c.DockerTLSCA, "docker-tls-ca", env("BOXSNAP_DOCKER_TLS_CA", ""), "a tcp:// engine's CA certificate (PEM)")
	fs.StringVar(&c.DockerTLSCert, "docker-tls-cert", env("BOXSNAP_DOCKER_TLS_CERT", ""), "boxsnap's client certificate for a tcp:// engine")
	fs.StringVar(&c.DockerTLSKey, "docker-tls-key", env("BOXSNAP_DOCKER_TLS_KEY", ""), "that certificate's key")
	fs.StringVar(&c.DockerNetwork, "docker-network", env("BOXSNAP_DOCKER_NETWORK", ""), "the network Docker boxes join (none for none)")
	r.dockerGoes = boolFlag(fs, "docker-boxes-go-with-host", env("BOXSNAP_DOCKER_BOXES_GO_WITH_HOST", "false"), "the host goes with its boxes: Keep is off (true/false)")
	fs.StringVar(&c.QEMUSocket, "qemu-socket", env("BOXSNAP_QEMU_SOCKET", ""), "libvirtd's unix socket, such as /run/libvirt/libvirt-sock")
	fs.StringVar(&c.QEMUID, "qemu-id", env("BOXSNAP_QEMU_ID", "qemu"), "the QEMU backend's ID")
	fs.StringVar(&c.QEMUAccel, "qemu-accel", env("BOXSNAP_QEMU_ACCEL", "auto"), "how QEMU runs guests: auto, kvm or tcg")
	fs.StringVar(&c.QEMUTemplates, "qemu-templates", env("BOXSNAP_QEMU_TEMPLATES", ""), "a folder of QEMU box templates, a folder each")
	fs.StringVar(&c.ContentStore, "content-store", env("BOXSNAP_CONTENT_STORE", ""), "keep the local backend's snapshots in an S3 bucket too: s3://bucket/prefix")
	fs.StringVar(&c.ContentStoreEndpoint, "content-store-endpoint", env("BOXSNAP_CONTENT_STORE_ENDPOINT", ""), "the S3 server: host:port, https://host:port or http://host:port")
	fs.StringVar(&c.ContentStoreRegion, "content-store-region", env("BOXSNAP_CONTENT_STORE_REGION", "us-east-1"), "the bucket's region")
	fs.StringVar(&c.ContentStoreCAFile, "content-store-ca-file", env("BOXSNAP_CONTENT_STORE_CA_FILE", ""), "PEM certificate(s) to trust for the S3 server")
	r.cacheSize = fs.String("content-cache-size", env("BOXSNAP_CONTENT_CACHE_SIZE", DefaultContentCacheSize), "with a content store, the most content kept on this host: a share of its file system, such as 25%, or a size, such as 50GiB; 0: all of it")
	r.forkMax = fs.String("fork-max-count", env("BOXSNAP_FORK_MAX_COUNT", "10"), "the most boxes one fork call makes (1 to 100)")
	r.retryKept = fs.String("retry-keys-kept-for", env("BOXSNAP_RETRY_KEYS_KEPT_FOR", "168h"), "how long an agent's request ID answers its first call (at least 1h)")
	r.intervals = make([]*string, len(intervalSettings))
	for n, i := range intervalSettings {
		r.intervals[n] = fs.String(i.flag, env(i.env, i.def), i.usage)
	}
	if err := fs.Parse(args); err != nil {
		return c, fs, err
	}
	errs := c.read(r, getenv)
	errs = append(errs, c.checkBackends()...)
	if why := HostNameProblem(c.Host); why != "" {
		errs = append(errs, fmt.Errorf("--host (BOXSNAP_HOST) %s, not %q", why, c.Host))
	}
	errs = append(errs, c.validate()...)
	return c, fs, errors.Join(errs...)
}

// rawSettings are the settings Load reads as text first, each read and
// checked by Config.read once the flags are parsed.
type rawSettings struct {
	workers, shutdown, dbWait, demo, diskImages, pveInsecure, pveZFS, dockerGoes *string
	cacheSize, forkMax, retryKept                                                *string
	intervals                                                                    []*string
}

// read turns r's texts and the secrets in the environment into c's
// fields, answering what is wrong with each.
func (c *Config) read(r rawSettings, getenv func(string) string) []error {
	var err error
	var errs []error
	for n, i := range intervalSettings {
		d, err := time.ParseDuration(*r.intervals[n])
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("--%s (%s) must be a duration above zero such as %s, not %q", i.flag, i.env, i.def, *r.intervals[n]))
			continue
		}
		*i.field(&c.Intervals) = d
	}
	if c.Intervals.Hosts > 0 && c.Intervals.Hosts < MinHostsInterval {
		errs = append(errs, fmt.Errorf("--hosts-interval (BOXSNAP_HOSTS_INTERVAL) must be at least %s, not %s", MinHostsInterval, c.Intervals.Hosts))
	}
	if c.Workers, err = strconv.ParseBool(*r.workers); err != nil {
		errs = append(errs, fmt.Errorf("--workers (BOXSNAP_WORKERS) must be true or false, not %q", *r.workers))
	}
	if c.Demo, err = strconv.ParseBool(*r.demo); err != nil {
		errs = append(errs, fmt.Errorf("--demo (BOXSNAP_DEMO) must be true or false, not %q", *r.demo))
	}
	if c.ShutdownTimeout, err = time.ParseDuration(*r.shutdown); err != nil || c.ShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-timeout (BOXSNAP_SHUTDOWN_TIMEOUT) must be a duration such as 30s, not %q", *r.shutdown))
	}
	if c.DatabaseWait, err = time.ParseDuration(*r.dbWait); err != nil || c.DatabaseWait < 0 {
		errs = append(errs, fmt.Errorf("--database-wait (BOXSNAP_DATABASE_WAIT) must be a duration such as 1m, not %q", *r.dbWait))
	}
	if c.Password, err = secret(getenv, "BOXSNAP_PASSWORD"); err != nil {
		errs = append(errs, err)
	}
	if c.Token, err = secret(getenv, "BOXSNAP_TOKEN"); err != nil {
		errs = append(errs, err)
	}
	if c.ProxmoxInsecureSkipTLSVerify, err = strconv.ParseBool(*r.pveInsecure); err != nil {
		errs = append(errs, fmt.Errorf("--proxmox-insecure-skip-tls-verify (BOXSNAP_PROXMOX_INSECURE_SKIP_TLS_VERIFY) must be true or false, not %q", *r.pveInsecure))
	}
	if c.ProxmoxZFSOrderLiveChecksOnly, err = strconv.ParseBool(*r.pveZFS); err != nil {
		errs = append(errs, fmt.Errorf("--proxmox-zfs-order-live-checks-only (BOXSNAP_PROXMOX_ZFS_ORDER_LIVE_CHECKS_ONLY) must be true or false, not %q", *r.pveZFS))
	}
	if c.LocalDiskImages, err = strconv.ParseBool(*r.diskImages); err != nil {
		errs = append(errs, fmt.Errorf("--local-disk-images (BOXSNAP_LOCAL_DISK_IMAGES) must be true or false, not %q", *r.diskImages))
	}
	if c.DockerBoxesGoWithHost, err = strconv.ParseBool(*r.dockerGoes); err != nil {
		errs = append(errs, fmt.Errorf("--docker-boxes-go-with-host (BOXSNAP_DOCKER_BOXES_GO_WITH_HOST) must be true or false, not %q", *r.dockerGoes))
	}
	if c.ForkMaxCount, err = strconv.Atoi(*r.forkMax); err != nil || c.ForkMaxCount < 1 || c.ForkMaxCount > MaxForkMaxCount {
		errs = append(errs, fmt.Errorf("--fork-max-count (BOXSNAP_FORK_MAX_COUNT) must be a whole number from 1 to %d, not %q", MaxForkMaxCount, *r.forkMax))
	}
	if c.RetryKeysKeptFor, err = time.ParseDuration(*r.retryKept); err != nil || c.RetryKeysKeptFor < MinRetryKeysKeptFor {
		errs = append(errs, fmt.Errorf("--retry-keys-kept-for (BOXSNAP_RETRY_KEYS_KEPT_FOR) must be a duration of at least 1h such as 168h, not %q", *r.retryKept))
	}
	if c.ProxmoxTokenSecret, err = secret(getenv, "BOXSNAP_PROXMOX_TOKEN_SECRET"); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.loadContentStore(getenv)...)
	if c.ContentCacheBytes, c.ContentCachePercent, err = parseCacheSize(*r.cacheSize); err != nil {
		errs = append(errs, fmt.Errorf("--content-cache-size (BOXSNAP_CONTENT_CACHE_SIZE) must be a share of the file system from 1%% to %d%% such as 25%%, a size such as 50GiB or 500MiB, or 0, not %q", MaxContentCachePercent, *r.cacheSize))
	}
	return errs
}

// checkBackends answers what is wrong with the backends' settings: an
// engine's, a libvirtd's or a Proxmox VE's address, and what each needs
// besides.
func (c *Config) checkBackends() []error {
	var errs []error
	if c.DockerHost != "" && !strings.HasPrefix(c.DockerHost, "unix://") && !strings.HasPrefix(c.DockerHost, "tcp://") && !strings.HasPrefix(c.DockerHost, "ssh://") {
		errs = append(errs, fmt.Errorf("--docker-host (BOXSNAP_DOCKER_HOST) must be unix://, tcp:// or ssh://, not %q", c.DockerHost))
	}
	if strings.HasPrefix(c.DockerHost, "tcp://") && (c.DockerTLSCA == "" || c.DockerTLSCert == "" || c.DockerTLSKey == "") {
		errs = append(errs, errors.New("a tcp:// Docker engine needs TLS: BOXSNAP_DOCKER_TLS_CA, BOXSNAP_DOCKER_TLS_CERT and BOXSNAP_DOCKER_TLS_KEY"))
	}
	if c.QEMUSocket != "" && !strings.HasPrefix(c.QEMUSocket, "/") {
		errs = append(errs, fmt.Errorf("--qemu-socket (BOXSNAP_QEMU_SOCKET) must be the full path of libvirtd's unix socket, such as /run/libvirt/libvirt-sock, not %q", c.QEMUSocket))
	}
	if c.QEMUAccel != "auto" && c.QEMUAccel != "kvm" && c.QEMUAccel != "tcg" {
		errs = append(errs, fmt.Errorf("--qemu-accel (BOXSNAP_QEMU_ACCEL) must be auto, kvm or tcg, not %q", c.QEMUAccel))
	}
	if c.ProxmoxURL != "" {
		if !strings.HasPrefix(c.ProxmoxURL, "https://") {
			errs = append(errs, fmt.Errorf("--proxmox-url (BOXSNAP_PROXMOX_URL) must be https://host:8006, not %q", c.ProxmoxURL))
		}
		if c.ProxmoxTokenID == "" || !strings.Contains(c.ProxmoxTokenID, "!") || c.ProxmoxTokenSecret == "" {
			errs = append(errs, errors.New("a Proxmox backend needs BOXSNAP_PROXMOX_TOKEN_ID (user@realm!tokenid) and BOXSNAP_PROXMOX_TOKEN_SECRET or BOXSNAP_PROXMOX_TOKEN_SECRET_FILE"))
		}
	}
	return errs
}

// DefaultContentCacheSize is BOXSNAP_CONTENT_CACHE_SIZE's default: a
// quarter of the file system holding the local backend's content. The
// room rule refuses new snapshots once a host's disk is past its room
// setting (50 to 90% full, 85% by default), so a cache of a quarter never
// by itself brings a host to even the strictest one, and leaves the rest
// to the boxes, the snapshots not shipped yet and the database.
const DefaultContentCacheSize = "25%"

// MaxContentCachePercent is the largest share of its file system the
// content cache may be set to: past it the room rule would refuse takes
// because of what the cache, which could be fetched back, holds.
const MaxContentCachePercent = 90

// parseCacheSize reads BOXSNAP_CONTENT_CACHE_SIZE: a share ("25%") as
// percent, a size ("50GiB") as bytes, or "0" as bytes -1 (no bound).
func parseCacheSize(s string) (bytes int64, percent int, err error) {
	if p, ok := strings.CutSuffix(strings.TrimSpace(s), "%"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > MaxContentCachePercent {
			return 0, 0, errors.New("not a share")
		}
		return 0, n, nil
	}
	n, err := parseBytes(s)
	if err != nil {
		return 0, 0, err
	}
	if n == 0 {
		return -1, 0, nil
	}
	return n, 0, nil
}

// parseBytes reads a size: a whole number of bytes, or one with KiB, MiB,
// GiB or TiB after it.
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for i, unit := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			s, mult = strings.TrimSpace(n), int64(1)<<(10*(i+1))
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, errors.New("not a size")
	}
	return n * mult, nil
}

// loadContentStore reads the content store's keys and checks its
// settings go together.
func (c *Config) loadContentStore(getenv func(string) string) []error {
	var errs []error
	var err error
	if c.ContentStoreAccessKey, err = secret(getenv, "BOXSNAP_CONTENT_STORE_ACCESS_KEY"); err != nil {
		errs = append(errs, err)
	}
	if c.ContentStoreSecretKey, err = secret(getenv, "BOXSNAP_CONTENT_STORE_SECRET_KEY"); err != nil {
		errs = append(errs, err)
	}
	if c.ContentStore == "" {
		return errs
	}
	if !strings.HasPrefix(c.ContentStore, "s3://") {
		errs = append(errs, fmt.Errorf("--content-store (BOXSNAP_CONTENT_STORE) must be s3://bucket or s3://bucket/prefix, not %q", c.ContentStore))
	}
	if c.ContentStoreEndpoint == "" {
		errs = append(errs, errors.New("a content store needs BOXSNAP_CONTENT_STORE_ENDPOINT, the S3 server's host:port (or https://host:port, http://host:port)"))
	}
	if c.ContentStoreAccessKey == "" || c.ContentStoreSecretKey == "" {
		errs = append(errs, errors.New("a content store needs BOXSNAP_CONTENT_STORE_ACCESS_KEY and BOXSNAP_CONTENT_STORE_SECRET_KEY (or their _FILEs)"))
	}
	return errs
}

func (c *Config) validate() []error {
	var errs []error
	switch c.LogFormat {
	case "auto", "text", "json":
	default:
		errs = append(errs, fmt.Errorf("--log-format (BOXSNAP_LOG_FORMAT) must be auto, text or json, not %q", c.LogFormat))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("--log-level (BOXSNAP_LOG_LEVEL) must be debug, info, warn or error, not %q", c.LogLevel))
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("--addr (BOXSNAP_ADDR) must be host:port, such as 127.0.0.1:8080, not %q", c.Addr))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("--tls-cert and --tls-key (BOXSNAP_TLS_CERT, BOXSNAP_TLS_KEY) go together: set both or neither"))
	}
	if c.DatabaseURL != "" {
		if _, err := url.Parse(c.DatabaseURL); err != nil && !strings.Contains(c.DatabaseURL, "=") {
			errs = append(errs, errors.New("DATABASE_URL is not a PostgreSQL URL such as postgres://user@host:5432/db"))
		}
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("--data-dir (BOXSNAP_DATA_DIR) cannot be empty"))
	} else if abs, err := filepath.Abs(c.DataDir); err == nil {
		c.DataDir = abs
	}
	if c.LocalRoot == "" {
		c.LocalRoot = filepath.Join(c.DataDir, "local")
	}
	if c.BaseURL == "" {
		scheme := "http"
		if c.TLSCert != "" {
			scheme = "https"
		}
		c.BaseURL = scheme + "://" + c.Addr
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return errs
}

// TLS reports whether boxsnap serves HTTPS itself or is reached over it.
func (c *Config) TLS() bool {
	return c.TLSCert != "" || strings.HasPrefix(c.BaseURL, "https://")
}

// secret reads NAME, or the file NAME_FILE names, trimming one trailing
// newline. Setting both is an error.
func secret(getenv func(string) string, name string) (string, error) {
	v, file := getenv(name), getenv(name+"_FILE")
	if v != "" && file != "" {
		return "", fmt.Errorf("set %s or %s_FILE, not both", name, name)
	}
	if file == "" {
		return v, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s_FILE: cannot read %s: %w", name, file, errors.Unwrap(err))
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// RedactedDatabaseURL is the database URL without its password, for logs and
// errors.
func (c *Config) RedactedDatabaseURL() string {
	return Redact(c.DatabaseURL)
}

// Redact removes a password from a PostgreSQL URL or key=value DSN.
func Redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	fields := strings.Fields(dsn)
	for i, f := range fields {
		if strings.HasPrefix(f, "password=") {
			fields[i] = "password=xxxxx"
		}
	}
	return strings.Join(fields, " ")
}

// boolText is a boolean flag kept as its text, so that a wrong value is
// refused naming the flag and its environment variable; IsBoolFlag makes
// the bare form (--demo) mean true, as people type it.
type boolText struct{ s string }

func (b *boolText) String() string {
	if b == nil {
		return ""
	}
	return b.s
}

func (b *boolText) Set(v string) error { b.s = v; return nil }

func (b *boolText) IsBoolFlag() bool { return true }

// boolFlag defines a boolean flag whose default is def (from the
// environment); "--name" alone is "--name=true".
func boolFlag(fs *flag.FlagSet, name, def, usage string) *string {
	b := &boolText{s: def}
	fs.Var(b, name, usage)
	return &b.s
}

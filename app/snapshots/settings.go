package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/boxsnap/boxsnap/app/store"
	"github.com/boxsnap/boxsnap/app/store/db"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/jackc/pgx/v5"
)

// Settings are the Snapshots settings page's values, with their defaults and
// ranges.
type Settings struct {
	PerBox                 int  `json:"perBox"`                 // 1 to 50
	RoomPercent            int  `json:"roomPercent"`            // 50 to 90
	KeepDays               int  `json:"keepDays"`               // 1 to 365
	AgentsMayRestore       bool `json:"agentsMayRestore"`       // on
	AgentsMayRestoreMemory bool `json:"agentsMayRestoreMemory"` // on
	Pictures               bool `json:"pictures"`               // on
	// ExecutionMachineRestores turns on restores of boxes threads run on, by
	// the person from the box's page and by an agent through a request (off
	// unless turned on: no turn may start on a box while it is restored).
	ExecutionMachineRestores bool `json:"executionMachineRestores"` // off
	// ApprovalMinutes is how long a request for the person's word waits
	// before it expires: 1 to 1440, 30 unless changed.
	ApprovalMinutes int                `json:"approvalMinutes"`
	Ceilings        map[string]float64 `json:"ceilings,omitempty"` // per backend, a month
	// ShareDays is how long a share code works: 1 to 30 days, 7 unless
	// changed.
	ShareDays int `json:"shareDays"`
	// AlsoRemove are home paths a fork and a share code's copy also leave
	// behind, beside providers.DefaultSecrets.
	AlsoRemove []string `json:"alsoRemove,omitempty"`
	// Automatic turns automatic snapshots on or off per backend ID; a backend
	// not named follows AutomaticByDefault.
	Automatic map[string]bool `json:"automatic,omitempty"`
	// CheckSeconds is how often a backend's running boxes are checked for
	// changes, per backend ID; a backend not named uses its own cadence.
	CheckSeconds map[string]int `json:"checkSeconds,omitempty"`
	// HistoryDays is how long automatic snapshots are kept, one a day at the
	// end: 1 to 365, 7 unless changed (moatbox's plan's "automatic history
	// days").
	HistoryDays int `json:"historyDays"`
	// HistoryGiB is the held data past which thinning drops a box's oldest
	// automatic snapshot, unless the box sets its own: 1 to 100,000, 100
	// unless changed.
	HistoryGiB int `json:"historyGiB"`
	// TrashHours is how long a released box waits in the trash before it
	// goes: 0 to 720 hours, 72 unless changed; 0 releases at once.
	TrashHours int `json:"trashHours"`
	// KeepLogins are home paths a reset with Keep logins also carries over,
	// beside providers.DefaultLogins.
	KeepLogins []string `json:"keepLogins,omitempty"`
}

// DefaultApprovalMinutes is how long a request waits for the person's word
// unless Settings says otherwise; MaxApprovalMinutes bounds the setting.
const (
	DefaultApprovalMinutes = 30
	MaxApprovalMinutes     = 24 * 60
)

// DefaultCeiling is the paid ceiling a month, per provider ($5, the owner's
// default).
const DefaultCeiling = 5.0

// DefaultSettings are the settings before the person changes any.
func DefaultSettings() Settings {
	return Settings{PerBox: DefaultPerBox, RoomPercent: DefaultRoomPercent, KeepDays: DefaultKeepDays,
		AgentsMayRestore: true, AgentsMayRestoreMemory: true, Pictures: true, ShareDays: DefaultShareDays,
		ApprovalMinutes: DefaultApprovalMinutes,
		HistoryDays:     DefaultHistoryDays, HistoryGiB: DefaultHistoryGiB, TrashHours: DefaultTrashHours}
}

// Validate checks each number against its range, in words.
func (st Settings) Validate() error {
	var errs []error
	if st.PerBox < MinPerBox || st.PerBox > MaxPerBox {
		errs = append(errs, errors.New(perBoxRangeWords(MinPerBox, MaxPerBox)))
	}
	if st.RoomPercent < MinRoomPercent || st.RoomPercent > MaxRoomPercent {
		errs = append(errs, errors.New(roomRangeWords(MinRoomPercent, MaxRoomPercent)))
	}
	if st.KeepDays < 1 || st.KeepDays > MaxKeepDays {
		errs = append(errs, errors.New(KeepDaysWords(MaxKeepDays)))
	}
	if st.ApprovalMinutes < 1 || st.ApprovalMinutes > MaxApprovalMinutes {
		errs = append(errs, errors.New(approvalRangeWords(MaxApprovalMinutes)))
	}
	if st.ShareDays < 1 || st.ShareDays > MaxShareDays {
		errs = append(errs, errors.New(ShareDaysWords(MaxShareDays)))
	}
	errs = append(errs, st.validateHistory()...)
	for _, p := range st.AlsoRemove {
		if strings.Contains(p, "..") || strings.HasPrefix(strings.TrimSpace(p), "/") {
			errs = append(errs, errors.New(alsoRemovePathWords(p)))
		}
	}
	if st.TrashHours < 0 || st.TrashHours > MaxTrashHours {
		errs = append(errs, errors.New(trashRangeWords(MaxTrashHours)))
	}
	for _, p := range st.KeepLogins {
		if err := checkLoginPath(p); err != nil {
			errs = append(errs, err)
		}
	}
	for id, c := range st.Ceilings {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			errs = append(errs, errors.New(ceilingNumberWords(id)))
		} else if c < 0 {
			errs = append(errs, errors.New(ceilingBelowZeroWords(id)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return refusal(CodeInvalid, err.Error())
	}
	return nil
}

// SettingsKeeper reads and saves the settings and reads the owner's time
// zone, holding both for readCacheFor within the process.
type SettingsKeeper struct {
	st     *store.Store
	logger *slog.Logger
	now    func() time.Time
	cache  readCache
}

// readCacheFor is how long a process keeps the settings and the owner's
// time zone it read: an operation reads them at several steps, and a
// change made in another process bites within this long.
const readCacheFor = time.Second

// readCache holds what the core reads often and changes seldom.
type readCache struct {
	mu            sync.Mutex
	tz            *time.Location
	tzUntil       time.Time
	settings      *Settings
	settingsUntil time.Time
}

const settingsKey = "snapshots"

// Settings reads the settings, with defaults for what was never set.
func (s *SettingsKeeper) Settings(ctx context.Context) (Settings, error) {
	s.cache.mu.Lock()
	if s.cache.settings != nil && s.now().Before(s.cache.settingsUntil) {
		st := *s.cache.settings
		s.cache.mu.Unlock()
		st.Ceilings = maps.Clone(st.Ceilings) // the caller may change its copy
		return st, nil
	}
	s.cache.mu.Unlock()
	st, err := s.ReadSettings(ctx)
	if err == nil {
		cached := st
		cached.Ceilings = maps.Clone(st.Ceilings) // the caller may change its own
		s.cache.mu.Lock()
		s.cache.settings, s.cache.settingsUntil = &cached, s.now().Add(readCacheFor)
		s.cache.mu.Unlock()
	}
	return st, err
}

// ReadSettings reads the settings afresh, past the process's cache.
func (s *SettingsKeeper) ReadSettings(ctx context.Context) (Settings, error) {
	st := DefaultSettings()
	raw, err := s.st.CoreSettingGet(ctx, s.st.Pool, settingsKey)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read settings: %w", err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return DefaultSettings(), fmt.Errorf("read settings: %w", err)
	}
	return st, nil
}

// SaveSettings validates and saves the settings; only the person may.
func (s *SettingsKeeper) SaveSettings(ctx context.Context, c Caller, st Settings) error {
	if !c.IsPerson() {
		return refusal(CodeForbidden, onlyPersonSettingsWords)
	}
	if err := st.Validate(); err != nil {
		return err
	}
	raw, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("save settings: %w", err)
	}
	if err := s.st.CoreSettingSet(ctx, s.st.Pool, db.CoreSettingSetParams{Key: settingsKey, Value: raw}); err != nil {
		return fmt.Errorf("save settings: %w", err)
	}
	s.cache.mu.Lock()
	s.cache.settings = nil // this process sees its own change at once
	s.cache.mu.Unlock()
	return nil
}

// Secrets is what a copy of a box leaves behind: the one list, and the
// settings' own paths. A fork's copy (Service) and an import's box and a
// share code's copy (Contents) leave it, so it is the core's.
func (s *SettingsKeeper) Secrets(ctx context.Context) providers.Secrets {
	st, _ := s.Settings(ctx)
	return providers.DefaultSecrets().With(st.AlsoRemove)
}

// DefaultShareDays is how long a share code works unless the settings say
// otherwise; MaxShareDays the longest. The settings bound ShareDays by
// them, and a share code's days too.
const (
	DefaultShareDays = 7
	MaxShareDays     = 30
)

package pagemodel

import (
	"fmt"
	"strings"

	"github.com/boxsnap/boxsnap/app/snapshots"
	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/views"
)

// BackendOffer is one backend's row in Settings: what it offers, read only,
// with any problem and its fix.
type BackendOffer struct {
	Label, Note, Kind, Where, Offers, Problem, Fix string
	Simulated                                      bool
}

// CeilingRow is one paid provider's ceiling a month.
type CeilingRow struct {
	ID, Label string
	Ceiling   float64
	Default   float64
	// Held is the rate held and this month's spend beside it; Past warns
	// that the rate is past the ceiling.
	Held, Past string
}

// HistoryRow is one backend's automatic snapshots: on or off, and how
// often its running boxes are checked.
type HistoryRow struct {
	ID, Label string
	On        bool
	Every     int
	Why       string // the backend's reason for its default cadence
	// Now says what the automatic history does for its boxes now.
	Now string
}

// SettingsSection is one group of the snapshot settings: a page one step
// in from the settings' index, which lists each with its values.
type SettingsSection struct {
	Slug, Title string
	// Value sums up the section's settings on the index: "5 per box".
	Value string
	// Problem is a section's amber words on the index, with its mark.
	Problem string
}

// sectionTitles are the snapshot settings' sections, in the index's order.
var sectionTitles = []struct{ slug, title string }{
	{"each-box", "Each box"},
	{"keep", "Keep"},
	{"agents", "Agents"},
	{"pictures", "Pictures"},
	{"history", "Automatic history"},
	{"requests", "Requests"},
	{"trash", "Trash and reset"},
	{"sharing", "Share codes and copies"},
	{"paid", "Paid snapshots"},
	{"backends", "What each backend offers"},
}

// SectionTitle is a section's title, or "" for a slug that is none.
func SectionTitle(slug string) string {
	for _, t := range sectionTitles {
		if t.slug == slug {
			return t.title
		}
	}
	return ""
}

type SettingsPage struct {
	Page views.Page
	// Section is the section this page shows; empty on the index, which
	// lists Sections.
	Section  string
	Title    string
	Sections []SettingsSection
	Summary  string
	Ceilings []CeilingRow
	History  []HistoryRow
	Settings snapshots.Settings
	Min, Max struct{ PerBox, Room, Keep, Share, Approval, Trash int }
	Offers   []BackendOffer
	// NoDocker: no Docker backend is configured; the page says how to add
	// one.
	NoDocker bool
	// NoQEMU: no QEMU backend is configured; the page says how to add one.
	NoQEMU bool
	// NotRun are the backends the specification names that boxsnap does
	// not run, each with why.
	NotRun []Unavailable
	Error  string
	Saved  bool
}

// offersWords says what a backend offers: "Disk; restores any; forks by
// full copy; keeps by held copy · no charge".
func offersWords(sn *providers.Snapshotting) string {
	if sn == nil {
		return "No snapshots"
	}
	var parts []string
	if sn.OffersMemory() {
		parts = append(parts, "Disk, or disk and memory")
	} else if sn.Scope == providers.ScopeDevice {
		parts = append(parts, "Device")
	} else {
		parts = append(parts, "Disk")
	}
	switch sn.Restore {
	case providers.RestoreInPlace:
		parts = append(parts, "restores any")
	case providers.RestoreNewGuest:
		parts = append(parts, "restores to a new guest")
	default:
		parts = append(parts, "no restores")
	}
	switch sn.Fork {
	case providers.ForkCopy:
		parts = append(parts, "forks by full copy")
	case providers.ForkShared:
		parts = append(parts, "forks share the snapshot's files")
	default:
		parts = append(parts, "no forks")
	}
	switch sn.KeepsPastRelease {
	case providers.KeepsHeldCopy:
		parts = append(parts, "keeps by held copy")
	case providers.KeepsAsIs:
		parts = append(parts, "keeps as is")
	default:
		parts = append(parts, "no Keep")
	}
	w := strings.Join(parts, "; ")
	if sn.Price == nil {
		return w + " · no charge"
	}
	return w + " · " + PriceTag(sn.Price)
}

// SnapshottingOf is what a backend offers: for the kind of one of its boxes,
// or else for a common kind; nil when it offers snapshots for none.
func SnapshottingOf(be snapshots.Backend, boxes []*snapshots.Box) *providers.Snapshotting {
	for _, b := range boxes {
		if b.BackendID == be.ID {
			if sn := be.Snapshotting(b.Kind); sn != nil {
				return sn
			}
		}
	}
	for _, k := range commonKinds {
		if sn := be.Snapshotting(k); sn != nil {
			return sn
		}
	}
	return nil
}

// CeilingsOf are the paid providers' ceiling rows, for each backend that
// holds a paid rate or whose snapshots have a price, and the summary's
// words for them ("Proxmox up to $20 a month").
func CeilingsOf(backends []snapshots.Backend, rates []snapshots.PaidRate, boxes []*snapshots.Box, st snapshots.Settings) (rows []CeilingRow, summary string) {
	for _, be := range backends {
		var held *snapshots.PaidRate
		for i := range rates {
			if rates[i].Backend == be.ID {
				held = &rates[i]
			}
		}
		if sn := SnapshottingOf(be, boxes); held != nil || sn != nil && sn.Price != nil {
			c, ok := st.Ceilings[be.ID]
			if !ok {
				c = snapshots.DefaultCeiling
			}
			row := CeilingRow{ID: be.ID, Label: be.Label, Ceiling: c, Default: snapshots.DefaultCeiling}
			if held != nil {
				row.Held = held.Words()
				if held.Past() {
					row.Past = held.PastWords()
				}
			}
			rows = append(rows, row)
			cur := ""
			if held != nil {
				cur = held.Currency
			} else if sn != nil && sn.Price != nil {
				cur = sn.Price.Currency
			}
			summary += fmt.Sprintf(" · %s up to %s a month", be.Label, snapshots.Money(c, cur))
		}
	}
	return rows, summary
}

// OfferOf is one backend's row for one kind of box (and host): what it
// offers, where, and any problem its plan reads, with its fix.
func OfferOf(kp KindPlan, roomPercent int) BackendOffer {
	o := BackendOffer{Label: kp.Backend.Label, Note: kp.Backend.Note, Simulated: kp.Backend.Simulated, Kind: KindWords(kp.Kind), Offers: "No snapshots"}
	if kp.Snapping != nil {
		o.Offers = planOffers(kp)
	}
	if kp.Host != kp.Backend.Label {
		o.Where = kp.Host
	}
	switch {
	case !kp.Planned:
		if kp.Snapping != nil {
			o.Where = joinWords(o.Where, "no box there yet: its storage is read with the first")
		}
	case kp.Err != nil && isLocked(kp.Err):
		o.Where = joinWords(o.Where, storageWords(kp.Plan.Storage))
		o.Problem, o.Fix = fmt.Sprintf("%s is locked (%s).", kp.Box.Name, kp.Plan.Locked.Lock), kp.Plan.Locked.Fix+"."
	case kp.Err != nil:
		o.Problem = RefusalWords(kp.Err)
	default:
		o.Where = joinWords(o.Where, storageWords(kp.Plan.Storage))
		switch {
		case !kp.Plan.Take.OK && !kp.Plan.Take.TryAgain:
			o.Problem = kp.Plan.Take.Why
		case kp.Plan.Storage.Name != "" && kp.Plan.Storage.PercentFull > float64(roomPercent):
			o.Problem = fmt.Sprintf("%s's storage is past %d%% full: new snapshots are refused.", kp.Host, roomPercent)
			o.Fix = "Delete snapshots there, or raise the threshold."
		case kp.Plan.Restore.Why != "" && kp.Plan.Restore.Way != providers.WayNone:
			// A plan's restore refusal speaks of one snapshot; the row
			// speaks of them all.
			why, fix, ok := strings.Cut(kp.Plan.Restore.Why, ": ")
			o.Problem = why + "."
			if ok {
				o.Fix = strings.ToUpper(fix[:1]) + strings.Replace(fix[1:], "this snapshot", "a snapshot", 1)
			}
		}
	}
	return o
}

// SectionsOf lists the sections for the index, each with what it is set
// to now.
func SectionsOf(p SettingsPage) []SettingsSection {
	st := p.Settings
	onOff := func(on bool, yes, no string) string {
		if on {
			return yes
		}
		return no
	}
	var out []SettingsSection
	for _, t := range sectionTitles {
		sec := SettingsSection{Slug: t.slug, Title: t.title}
		switch t.slug {
		case "each-box":
			sec.Value = fmt.Sprintf("%d per box · refused past %d%% full", st.PerBox, st.RoomPercent)
		case "keep":
			sec.Value = fmt.Sprintf("kept %d days", st.KeepDays)
		case "agents":
			sec.Value = onOff(st.AgentsMayRestore, "restore their own boxes", "ask before a restore") + " · " +
				onOff(st.AgentsMayRestoreMemory, "memory snapshots too", "not memory snapshots")
		case "pictures":
			sec.Value = onOff(st.Pictures, "a picture with each snapshot", "off")
		case "history":
			on := 0
			for _, h := range p.History {
				if h.On {
					on++
				}
			}
			sec.Value = fmt.Sprintf("on for %d of %d backends · kept %d days", on, len(p.History), st.HistoryDays)
		case "requests":
			sec.Value = fmt.Sprintf("wait %d minutes", st.ApprovalMinutes)
		case "trash":
			sec.Value = fmt.Sprintf("%d hours in the trash", st.TrashHours)
		case "sharing":
			sec.Value = fmt.Sprintf("codes work %d days", st.ShareDays)
		case "paid":
			var parts []string
			for _, c := range p.Ceilings {
				parts = append(parts, fmt.Sprintf("%s up to $%.0f a month", c.Label, c.Ceiling))
				if c.Past != "" {
					sec.Problem = c.Past
				}
			}
			sec.Value = strings.Join(parts, " · ")
			if len(parts) == 0 {
				sec.Value = "none of your backends charges"
			}
		case "backends":
			problems := 0
			for _, o := range p.Offers {
				if o.Problem != "" {
					problems++
				}
			}
			sec.Value = Plural(len(p.Offers), "row", "rows")
			if problems > 0 {
				sec.Problem = fmt.Sprintf("%d with a problem", problems)
			}
		}
		out = append(out, sec)
	}
	return out
}

// joinWords joins the non-empty words with " · ".
func joinWords(ws ...string) string {
	var out []string
	for _, w := range ws {
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " · ")
}

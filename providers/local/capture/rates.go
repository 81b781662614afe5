package capture

import (
	"encoding/json"
	"os"
	"time"

	"github.com/boxsnap/boxsnap/providers/local/store"
)

// Rates is the running measure of how fast takes go, kept in rates.json.
type Rates struct {
	BytesPerSecond float64 `json:"bytesPerSecond"`
	FilesPerSecond float64 `json:"filesPerSecond"`
}

// Starting rates before any take was measured: a modest disk.
const (
	defaultBytesPerSecond = 200 << 20
	defaultFilesPerSecond = 50000
	// rateWeight is the weight of a new measure in the running rate.
	rateWeight = 0.3
	// Measures below these are too small to say anything.
	minMeasuredBytes = 4 << 20
	minMeasuredFiles = 1000
)

// ReadRates reads the running rates, or the starting ones.
func (b *Capturer) ReadRates() Rates {
	b.ratesMu.Lock()
	defer b.ratesMu.Unlock()
	return b.readRatesLocked()
}

func (b *Capturer) readRatesLocked() Rates {
	r := Rates{BytesPerSecond: defaultBytesPerSecond, FilesPerSecond: defaultFilesPerSecond}
	data, err := os.ReadFile(b.Path(store.FileRates))
	if err != nil {
		return r
	}
	var got Rates
	if json.Unmarshal(data, &got) == nil && got.BytesPerSecond > 0 && got.FilesPerSecond > 0 {
		return got
	}
	return r
}

// Measure folds one take's figures into the running rates.
func (b *Capturer) Measure(files int, statTime time.Duration, bytes int64, copyTime time.Duration) {
	b.ratesMu.Lock()
	defer b.ratesMu.Unlock()
	r := b.readRatesLocked()
	changed := false
	if files >= minMeasuredFiles && statTime > 0 {
		r.FilesPerSecond = (1-rateWeight)*r.FilesPerSecond + rateWeight*float64(files)/statTime.Seconds()
		changed = true
	}
	if bytes >= minMeasuredBytes && copyTime > 0 {
		r.BytesPerSecond = (1-rateWeight)*r.BytesPerSecond + rateWeight*float64(bytes)/copyTime.Seconds()
		changed = true
	}
	if !changed {
		return
	}
	data, _ := json.Marshal(r)
	if err := store.ReplaceFile(b.Path(store.FileRates), data, 0o600); err != nil {
		b.Log.Warn("local backend: could not keep the measured Rates", "err", err)
	}
}

// Estimate is how long a take of files stats and bytes of new content takes.
func (r Rates) Estimate(files int, bytes int64) time.Duration {
	d := time.Duration(float64(files)/r.FilesPerSecond*float64(time.Second)) +
		time.Duration(float64(bytes)/r.BytesPerSecond*float64(time.Second))
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return d
}

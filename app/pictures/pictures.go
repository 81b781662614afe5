package pictures

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"os"
	"os/exec"
	"sync"

	"github.com/disintegration/imaging"
	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/snapshots"
)

// The picture's shape: a JPEG 320 px wide, quality 70, taken from a screen of
// this size.
const (
	Width         = snapshots.PictureWidth
	Quality       = snapshots.PictureQuality
	screenWidth   = 1280
	screenHeight  = 800
	defaultChrome = "/usr/bin/chromium"
)

// ErrNoScreen is returned for a box with no screen served over HTTP.
var ErrNoScreen = errors.New("pictures: the box has no screen that boxsnap can capture")

// Options configure the picture taker.
type Options struct {
	// DriverDir is npm's playwright-core folder; empty reads
	// PLAYWRIGHT_DRIVER_DIR.
	DriverDir string
	// Chromium is the browser to run; empty is Debian's /usr/bin/chromium.
	Chromium string
	Logger   *slog.Logger
}

// Taker captures boxes' screens with one headless Chromium, started on the
// first picture and kept until Close.
type Taker struct {
	opts    Options
	mu      sync.Mutex
	pw      *playwright.Playwright
	browser playwright.Browser
	err     error
}

var _ snapshots.PictureTaker = (*Taker)(nil)

// New makes a picture taker; nothing starts until the first picture.
func New(opts Options) *Taker {
	if opts.DriverDir == "" {
		opts.DriverDir = os.Getenv("PLAYWRIGHT_DRIVER_DIR")
	}
	if opts.Chromium == "" {
		opts.Chromium = defaultChrome
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Taker{opts: opts}
}

// Start starts the browser now rather than at the first picture, for a
// process that wants its first picture within the core's 2 s too.
func (t *Taker) Start() error {
	_, err := t.start()
	return err
}

// start runs the driver and the browser once; a failure is kept, so a
// machine without a browser does not try again at every take.
func (t *Taker) start() (playwright.Browser, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.browser != nil || t.err != nil {
		return t.browser, t.err
	}
	if os.Getenv("PLAYWRIGHT_NODEJS_PATH") == "" {
		if node, err := exec.LookPath("node"); err == nil {
			// playwright-go runs the driver with this node; without it, it
			// looks for a node of its own in the driver's folder.
			_ = os.Setenv("PLAYWRIGHT_NODEJS_PATH", node)
		}
	}
	ro := &playwright.RunOptions{DriverDirectory: t.opts.DriverDir, SkipInstallBrowsers: true, Stdout: nopWriter{}, Stderr: nopWriter{}}
	if err := playwright.Install(ro); err != nil {
		t.err = fmt.Errorf("pictures: playwright driver in %s: %w", t.opts.DriverDir, err)
		return nil, t.err
	}
	pw, err := playwright.Run(ro)
	if err != nil {
		t.err = fmt.Errorf("pictures: start playwright: %w", err)
		return nil, t.err
	}
	b, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(t.opts.Chromium), Headless: playwright.Bool(true),
		Args: []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync"}})
	if err != nil {
		_ = pw.Stop()
		t.err = fmt.Errorf("pictures: launch %s: %w", t.opts.Chromium, err)
		return nil, t.err
	}
	t.pw, t.browser = pw, b
	return b, nil
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// Capture takes a picture of b's screen within ctx's deadline (the core
// gives 2 s): the page at b's screen URL, resized to 320 px wide.
func (t *Taker) Capture(ctx context.Context, b *snapshots.Box) ([]byte, int, int, error) {
	if !b.HasScreen || b.ScreenURL == "" {
		return nil, 0, 0, ErrNoScreen
	}
	type result struct {
		png []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		png, err := t.screenshot(ctx, b.ScreenURL)
		done <- result{png, err}
	}()
	var res result
	select {
	case <-ctx.Done():
		return nil, 0, 0, fmt.Errorf("pictures: %s: %w", b.Name, ctx.Err())
	case res = <-done:
	}
	if res.err != nil {
		return nil, 0, 0, fmt.Errorf("pictures: %s: %w", b.Name, res.err)
	}
	return Shrink(res.png)
}

func (t *Taker) screenshot(ctx context.Context, url string) ([]byte, error) {
	br, err := t.start()
	if err != nil {
		return nil, err
	}
	timeout := 2000.0
	if dl, ok := ctx.Deadline(); ok {
		timeout = float64(max(int64(1), int64(timeUntil(dl).Milliseconds())))
	}
	page, err := br.NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: screenWidth, Height: screenHeight}})
	if err != nil {
		return nil, fmt.Errorf("open a page: %w", err)
	}
	defer page.Close()
	if _, err := page.Goto(url, playwright.PageGotoOptions{Timeout: playwright.Float(timeout), WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
		return nil, fmt.Errorf("open the screen: %w", err)
	}
	png, err := page.Screenshot(playwright.PageScreenshotOptions{Timeout: playwright.Float(timeout)})
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return png, nil
}

// Shrink makes a picture of any image: a JPEG 320 px wide at quality 70,
// with its width and height.
func Shrink(raw []byte) ([]byte, int, int, error) {
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("pictures: decode: %w", err)
	}
	small := imaging.Resize(img, Width, 0, imaging.Lanczos)
	var buf bytes.Buffer
	if err := imaging.Encode(&buf, small, imaging.JPEG, imaging.JPEGQuality(Quality)); err != nil {
		return nil, 0, 0, fmt.Errorf("pictures: encode: %w", err)
	}
	bnd := small.Bounds()
	return buf.Bytes(), bnd.Dx(), bnd.Dy(), nil
}

// Close stops the browser and the driver, if they started.
func (t *Taker) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	if t.browser != nil {
		errs = append(errs, t.browser.Close())
	}
	if t.pw != nil {
		errs = append(errs, t.pw.Stop())
	}
	t.browser, t.pw = nil, nil
	return errors.Join(errs...)
}

// PlaywrightCoreVersion is the npm playwright-core that the playwright-go
// module in go.mod drives (make browser-deps installs it into
// .cache/playwright-driver-<version>).
const PlaywrightCoreVersion = "1.64.1"

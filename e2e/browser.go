package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/mxschmitt/playwright-go"
)

// Chromium is Debian's browser, which the tests and the screenshot run
// drive.
const Chromium = "/usr/bin/chromium"

// Browser is Playwright's driver with one headless Chromium.
type Browser struct {
	PW      *playwright.Playwright
	Browser playwright.Browser
}

// Launch starts the driver found in $PLAYWRIGHT_DRIVER_DIR (npm's
// playwright-core, which `make browser-deps` installs) with this machine's
// node, and Debian's Chromium.
func Launch() (*Browser, error) {
	dir := os.Getenv("PLAYWRIGHT_DRIVER_DIR")
	if dir == "" {
		return nil, errors.New("PLAYWRIGHT_DRIVER_DIR is not set: run `make browser-deps` and export it (see the Makefile)")
	}
	if os.Getenv("PLAYWRIGHT_NODEJS_PATH") == "" {
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, errors.New("node is missing: install Node.js 20")
		}
		if err := os.Setenv("PLAYWRIGHT_NODEJS_PATH", node); err != nil {
			return nil, err
		}
	}
	ro := &playwright.RunOptions{DriverDirectory: dir, SkipInstallBrowsers: true, Stdout: discard{}, Stderr: discard{}}
	if err := playwright.Install(ro); err != nil {
		return nil, fmt.Errorf("playwright driver in %s: %w", dir, err)
	}
	pw, err := playwright.Run(ro)
	if err != nil {
		return nil, fmt.Errorf("start playwright: %w", err)
	}
	b, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(Chromium), Headless: playwright.Bool(true),
		Args: []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync"}})
	if err != nil {
		_ = pw.Stop()
		return nil, fmt.Errorf("launch %s: %w", Chromium, err)
	}
	return &Browser{PW: pw, Browser: b}, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Close stops the browser and the driver.
func (b *Browser) Close() error {
	return errors.Join(b.Browser.Close(), b.PW.Stop())
}

// Page opens a signed-in page of width px in the given color scheme.
func (b *Browser) Page(base string, width, height int, dark bool) (playwright.BrowserContext, playwright.Page, error) {
	return b.PageWith(base, width, height, dark, false)
}

// PageWith is Page, and with bypassCSP a page where a test may add a script
// (axe-core) that boxsnap's Content-Security-Policy would refuse.
func (b *Browser) PageWith(base string, width, height int, dark, bypassCSP bool) (playwright.BrowserContext, playwright.Page, error) {
	scheme := playwright.ColorSchemeLight
	if dark {
		scheme = playwright.ColorSchemeDark
	}
	ctx, err := b.Browser.NewContext(playwright.BrowserNewContextOptions{BypassCSP: playwright.Bool(bypassCSP),
		Viewport: &playwright.Size{Width: width, Height: height}, ColorScheme: scheme, BaseURL: playwright.String(base)})
	if err != nil {
		return nil, nil, err
	}
	page, err := ctx.NewPage()
	if err != nil {
		return nil, nil, err
	}
	if err := SignIn(page, base); err != nil {
		return nil, nil, err
	}
	return ctx, page, nil
}

// SignIn signs the owner in through the sign-in page.
func SignIn(page playwright.Page, base string) error {
	if _, err := page.Goto(base + "/signin"); err != nil {
		return err
	}
	if err := page.Locator("#password").Fill(Password); err != nil {
		return err
	}
	if err := page.Locator("#password").Press("Enter"); err != nil {
		return err
	}
	return page.WaitForURL(base + "/boxes/snapshots")
}

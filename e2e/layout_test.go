package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/boxsnap/boxsnap/app/dbtest"
	"github.com/boxsnap/boxsnap/app/pictures"
)

// layoutWidths are the widths every page is laid out for: a phone, a narrow
// window and a desktop.
var layoutWidths = []int{390, 760, 1440}

// layoutChecks measures the page from its elements' boxes and returns what
// is wrong, in words: horizontal overflow, a menu, popover or dialog off
// the screen, a checkbox or radio wider than 32 px, a target under 24 px,
// a text block squeezed under 12 characters wide, a field's pattern that
// does not compile, and a character the page's fonts have no glyph for
// (drawn as an empty box); the top bar wrapping to a second row, an
// underlined link outside a sentence, a state without its word or icon
// (a spinner outside its state),
// and more than one solid button in a view.
const layoutChecks = `() => {
	const vw = document.documentElement.clientWidth, vh = window.innerHeight;
	const out = [];
	const seen = new Set();
	const say = (what, el) => {
		const r = el.getBoundingClientRect();
		const id = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "");
		const text = (el.getAttribute("aria-label") || el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40);
		const line = what + ": " + id + " ‘" + text + "’ at x=" + Math.round(r.left) + " w=" + Math.round(r.width) + " h=" + Math.round(r.height);
		if (!seen.has(line)) { seen.add(line); out.push(line); }
	};
	const visible = el => {
		const r = el.getBoundingClientRect();
		if (r.width <= 1 || r.height <= 1) return false;
		if (!el.checkVisibility({contentVisibilityAuto: true, opacityProperty: true, visibilityProperty: true})) return false;
		return !el.closest(".sr-only, .skip");
	};
	if (document.documentElement.scrollWidth > vw + 1) out.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " px wide in a " + vw + " px window");
	const all = Array.from(document.querySelectorAll("body *")).filter(visible);
	// Inside a box that scrolls sideways on purpose, overflow is its own.
	const scrolls = el => { for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) { const o = getComputedStyle(a).overflowX; if (o === "auto" || o === "scroll" || o === "hidden") return true; } return false; };
	const over = el => { const r = el.getBoundingClientRect(); return (r.right > vw + 1 || r.left < -1) && !scrolls(el); };
	for (const el of all) {
		// The outermost element that overflows names the place.
		if (over(el) && !(el.parentElement && all.includes(el.parentElement) && over(el.parentElement))) say("overflows the window sideways", el);
	}
	for (const el of document.querySelectorAll("details.menu[open] .items, details[open] .panel, dialog[open], :popover-open")) {
		if (!visible(el)) continue;
		const r = el.getBoundingClientRect();
		if (r.left < -1 || r.right > vw + 1 || r.top < -1 || (el.matches("dialog[open], :popover-open") && r.bottom > vh + 1 && getComputedStyle(el).position === "fixed" && el.scrollHeight <= el.clientHeight)) say("leaves the screen", el);
	}
	for (const el of document.querySelectorAll("input[type=checkbox], input[type=radio]")) {
		if (visible(el) && el.getBoundingClientRect().width > 32) say("a checkbox or radio wider than 32 px", el);
	}
	// Targets: links, buttons, menus' buttons and form fields. A link in a
	// sentence is exempt (WCAG 2.5.8's inline exception), as is a control
	// in a label that is itself big enough.
	for (const el of document.querySelectorAll("a[href], button, summary, input:not([type=hidden]), select, textarea, [role=button]")) {
		if (!visible(el)) continue;
		const r = el.getBoundingClientRect();
		if (r.width >= 24 && r.height >= 24) continue;
		if (el.matches("a") && getComputedStyle(el).display === "inline") {
			const p = el.parentElement;
			const words = Array.from(p.childNodes).some(n => n.nodeType === 3 && n.textContent.trim() !== "");
			if (words) continue;
		}
		const label = el.closest("label");
		if (label) { const lr = label.getBoundingClientRect(); if (lr.height >= 24 && lr.width >= 24) continue; }
		say("a target under 24 px", el);
	}
	// Text squeezed: a block whose own words run to 12 characters or more,
	// in a box narrower than its first 12 characters.
	const measure = document.createElement("canvas").getContext("2d");
	for (const el of all) {
		const own = Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join(" ").trim().replace(/\s+/g, " ");
		if (own.length < 12) continue;
		const cs = getComputedStyle(el);
		if (cs.display === "inline") continue;
		measure.font = cs.fontSize + " " + cs.fontFamily;
		if (el.getBoundingClientRect().width + 1 < measure.measureText(own.slice(0, 12)).width) say("text squeezed under 12 characters wide", el);
	}
	// The top bar is one row: its brand, its navigation (or Menu) and Sign
	// out side by side, never wrapped.
	const top = document.querySelector("header.top");
	if (top) {
		const kids = Array.from(top.children).filter(visible);
		const first = kids.length ? kids[0].getBoundingClientRect() : null;
		for (const k of kids) { const r = k.getBoundingClientRect(); if (r.top >= first.bottom - 1) say("the top bar wraps to a second row", k); }
		// Nor do the navigation's own links wrap inside it.
		const links = Array.from(top.querySelectorAll(":scope > nav > a")).filter(visible);
		const row = links.length ? links[0].getBoundingClientRect() : null;
		for (const a of links) { if (a.getBoundingClientRect().top >= row.bottom - 1) say("the navigation wraps to a second row", a); }
	}
	// A link is underlined only in a sentence (a parent with words of its
	// own); navigation, tabs, names, chips and buttons are not.
	for (const el of document.querySelectorAll("a[href]")) {
		if (!visible(el) || !getComputedStyle(el).textDecorationLine.includes("underline")) continue;
		const words = Array.from(el.parentElement.childNodes).some(n => n.nodeType === 3 && n.textContent.trim() !== "");
		if (!words) say("an underlined link outside a sentence", el);
	}
	// A state (running, stopped, taking, restoring, failed, unavailable)
	// says its word beside its icon: never colour alone.
	for (const el of document.querySelectorAll(".state")) {
		if (!visible(el)) continue;
		if (el.textContent.trim().length < 3) say("a state without words", el);
		if (!el.querySelector("svg, .spinner")) say("a state without its icon", el);
	}
	// A spinner is a busy state's icon: always inside its state, beside
	// its word.
	for (const el of document.querySelectorAll(".spinner")) {
		if (visible(el) && !el.closest(".state")) say("a spinner outside a state", el);
	}
	// One solid (primary) button a view: in an open dialog, the dialog;
	// otherwise the page outside its dialogs, menus and popovers.
	const probe = document.createElement("div");
	probe.style.backgroundColor = "var(--accent)";
	document.body.appendChild(probe);
	const accent = getComputedStyle(probe).backgroundColor;
	probe.remove();
	const dlg = document.querySelector("dialog[open]");
	const scope = dlg || document.querySelector("main");
	if (scope) {
		const solid = Array.from(scope.querySelectorAll("button, a.button, summary.button")).filter(el => visible(el) &&
			getComputedStyle(el).backgroundColor === accent && (dlg || !el.closest("dialog, [popover], details.menu")));
		if (solid.length > 1) for (const el of solid) say("one of " + solid.length + " solid buttons in one view", el);
	}
	// A field's pattern must compile as Chromium compiles it (the v flag),
	// or the browser ignores it and says so only in its console.
	for (const el of document.querySelectorAll("input[pattern]")) {
		try { new RegExp(el.getAttribute("pattern"), "v"); } catch (e) { say("an invalid pattern " + el.getAttribute("pattern"), el); }
	}
	// Glyphs: each symbol is drawn on a canvas in its element's font and
	// compared with a character no font has; equal means an empty box.
	const canvas = document.createElement("canvas"), g = canvas.getContext("2d");
	const drawn = (ch, font) => {
		canvas.width = 40; canvas.height = 40;
		g.font = font; g.textBaseline = "top"; g.fillStyle = "#000"; g.clearRect(0, 0, 40, 40); g.fillText(ch, 4, 4);
		return Array.from(g.getImageData(0, 0, 40, 40).data).join(",");
	};
	const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	const checked = new Set();
	for (let n = walker.nextNode(); n; n = walker.nextNode()) {
		const el = n.parentElement;
		if (!el || !visible(el)) continue;
		for (const ch of n.textContent) {
			const cp = ch.codePointAt(0);
			if (cp < 0x2190 || ch.trim() === "") continue;
			const font = getComputedStyle(el).fontSize + " " + getComputedStyle(el).fontFamily;
			const key = ch + font;
			if (checked.has(key)) continue;
			checked.add(key);
			if (drawn(ch, font) === drawn("\uE000", font)) say("no glyph for " + ch + " (U+" + cp.toString(16).toUpperCase() + ")", el);
		}
	}
	return out;
}`

// axeRun runs axe-core and returns its serious and critical violations.
const axeRun = `async () => {
	const r = await axe.run(document, {resultTypes: ["violations"]});
	return r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.id + " (" + v.impact + "): " + v.help + " at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", "));
}`

// TestLayoutEveryState opens every state of the screenshot run (the one
// list, e2e.Scene.States) at 390, 760 and 1440 px and checks its layout
// from the elements' boxes, and runs axe-core on it. One boxsnap, one
// browser, one page per width.
func TestLayoutEveryState(t *testing.T) {
	axeJS := axeScript(t)
	br, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	ctx := context.Background()
	pool := dbtest.New(t)
	taker := pictures.New(pictures.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { _ = taker.Close() })
	if err := taker.Start(); err != nil {
		t.Fatal(err)
	}
	s, err := Start(ctx, pool, StackOptions{LocalRoot: filepath.Join(t.TempDir(), "local"), Pictures: taker, StopTimeout: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = s.Close(cctx)
	})
	scene, err := s.SetScene(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := scene.States()
	for _, w := range layoutWidths {
		bctx, page, err := br.PageWith(s.URL, w, 900, false, true)
		if err != nil {
			t.Fatal(err)
		}
		page.SetDefaultTimeout(15000)
		for _, st := range states {
			what := fmt.Sprintf("%s at %d px", st.Name, w)
			if _, err := page.Goto(s.URL + st.Path); err != nil {
				t.Errorf("%s: %v", what, err)
				continue
			}
			if st.Do != nil {
				if err := st.Do(page); err != nil {
					t.Errorf("%s: %v", what, err)
					continue
				}
			}
			checkLayout(t, page, what)
			// A box's Snapshots card shows its pictures at least 160 px
			// wide on a wide window, 48 px below 640 px.
			res, err := page.Evaluate(`() => Array.from(document.querySelectorAll("#snapshots-card .pic")).filter(e => e.checkVisibility()).map(e => e.getBoundingClientRect().width)`)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			widths, _ := res.([]any)
			for _, pw := range widths {
				px, _ := pw.(float64)
				if n, ok := pw.(int); ok {
					px = float64(n)
				}
				if w == 1440 && px < 160 || w == 390 && px > 48 {
					t.Errorf("%s: a picture in the Snapshots card is %.0f px wide", what, px)
				}
			}
			checkAxe(t, page, what, axeJS)
		}
		_ = bctx.Close()
	}
}

// axeScript is axe-core's script, from BOXSNAP_AXE_DIR.
func axeScript(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BOXSNAP_AXE_DIR")
	if dir == "" {
		t.Fatal("BOXSNAP_AXE_DIR is not set: run `make browser-deps` (make test sets it)")
	}
	return filepath.Join(dir, "axe.min.js")
}

// checkLayout fails the test with what layoutChecks finds wrong on the
// page, named by what.
func checkLayout(t *testing.T, page playwright.Page, what string) {
	t.Helper()
	res, err := page.Evaluate(layoutChecks)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if list, _ := res.([]any); len(list) > 0 {
		t.Errorf("%s:\n%s", what, lines(list))
	}
}

// checkAxe fails the test with what axe finds on the page (its script
// axeJS, let past the page's CSP), named by what.
func checkAxe(t *testing.T, page playwright.Page, what, axeJS string) {
	t.Helper()
	if _, err := page.AddScriptTag(playwright.PageAddScriptTagOptions{Path: playwright.String(axeJS)}); err != nil {
		t.Fatalf("%s: inject axe: %v", what, err)
	}
	res, err := page.Evaluate(axeRun)
	if err != nil {
		t.Fatalf("axe on %s: %v", what, err)
	}
	if list, _ := res.([]any); len(list) > 0 {
		t.Errorf("axe on %s:\n%s", what, lines(list))
	}
}

func lines(list []any) string {
	out := ""
	for _, l := range list {
		out += "  " + fmt.Sprint(l) + "\n"
	}
	return out
}

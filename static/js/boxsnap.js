// boxsnap's own script: dialogs as modal alert dialogs with focus returned
// to what opened them, the polite live region, Copy ID and the restore
// button's wording. No inline scripts: the Content-Security-Policy forbids
// them. Every page works without this file; it only makes them smoother.
(function () {
  "use strict";
  var opener = null;
  // The opener's id, to find it again after its card was fetched anew.
  var openerID = "";

  function refocus() {
    var back = (openerID && document.getElementById(openerID)) || (opener && document.contains(opener) ? opener : null) ||
      document.getElementById("snapcard-h") || document.querySelector("main h1");
    if (back) back.focus();
  }

  function live(text) {
    var region = document.getElementById("live");
    if (!region || !text) return;
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 50);
  }

  // The control a dialog returns focus to: the link or button that opened
  // it, or, for an item of a menu, the menu's button.
  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("[data-dialog]") : null;
    if (a) {
      var menu = a.closest("details.menu");
      opener = menu ? menu.querySelector("summary") : a;
      if (menu) menu.open = false;
      openerID = opener.id || "";
    }
    var c = e.target.closest ? e.target.closest("[data-close]") : null;
    if (c) {
      var dlg = c.closest("dialog");
      if (dlg && dlg.parentElement && dlg.parentElement.id === "dialog-host") {
        e.preventDefault();
        dlg.close();
      }
    }
    var copy = e.target.closest ? e.target.closest("[data-copy]") : null;
    if (copy && navigator.clipboard) {
      navigator.clipboard.writeText(copy.getAttribute("data-copy")).then(function () { live("Copied " + copy.getAttribute("data-copy") + "."); }, function () {});
    }
    // A click outside an open menu closes it.
    document.querySelectorAll("details.menu[open], details.filters[open]").forEach(function (d) {
      if (!d.contains(e.target)) d.open = false;
    });
  }, true);

  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    var menu = document.activeElement && document.activeElement.closest ? document.activeElement.closest("details.menu[open]") : null;
    if (menu) {
      menu.open = false;
      menu.querySelector("summary").focus();
    }
  });

  // Where the page was when a dialog's swap began.
  var scrollAt = null;
  document.addEventListener("htmx:before:swap", function (e) {
    var ctx = e.detail && e.detail.ctx;
    if (ctx && ctx.target && ctx.target.id === "dialog-host") scrollAt = { x: window.scrollX, y: window.scrollY };
  });

  function openDialog(dlg) {
    if (dlg.getAttribute("data-shown")) return;
    dlg.setAttribute("data-shown", "1");
    // Rendered open for its own page; as a fragment it opens as a modal.
    // Removing the attribute fires no close event, as close() would.
    // The page behind stays where it was before the dialog came: htmx
    // focuses the autofocus field as the swap settles, before this runs,
    // and that focus scrolls; here the field takes it without scrolling.
    var at = scrollAt || { x: window.scrollX, y: window.scrollY };
    scrollAt = null;
    dlg.removeAttribute("open");
    dlg.showModal();
    var first = dlg.querySelector("[autofocus]");
    if (first) first.focus({ preventScroll: true });
    if (window.scrollX !== at.x || window.scrollY !== at.y) window.scrollTo(at.x, at.y);
    dlg.addEventListener("close", function () {
      var host = document.getElementById("dialog-host");
      if (host && host.contains(dlg)) host.innerHTML = "";
      refocus();
    });
    wireUndo(dlg);
  }

  // The restore button's wording follows the undo box: "Restore amber-fox"
  // or "… anyway", and "Restore without undo" in red when it is unticked.
  function wireUndo(root) {
    var box = root.querySelector("input[data-undo]");
    if (!box) return;
    var btn = root.querySelector("button[type=submit]");
    box.addEventListener("change", function () {
      if (box.checked) {
        btn.textContent = btn.getAttribute("data-submit");
        btn.classList.remove("danger");
      } else {
        btn.textContent = btn.getAttribute("data-submit-noundo");
        btn.classList.add("danger");
      }
    });
  }

  // A card fetched again while someone tabs through it keeps their place:
  // focus goes back to the element with the same id.
  var lastFocus = "";
  document.addEventListener("focusin", function (e) { if (e.target.id) lastFocus = e.target.id; });

  // Ticked rows stay ticked when a polling card is fetched again.
  var picked = {};
  document.addEventListener("change", function (e) {
    if (e.target.matches && e.target.matches("input.pick")) picked[e.target.value] = e.target.checked;
  });

  function keepPicks() {
    document.querySelectorAll("input.pick").forEach(function (box) {
      if (picked[box.value] !== undefined && box.checked !== picked[box.value]) box.checked = picked[box.value];
    });
    countPicks();
  }

  // The bulk bar says how many are ticked.
  function countPicks() {
    var said = document.getElementById("picked-count");
    if (!said) return;
    var n = document.querySelectorAll("input.pick:checked").length;
    var text = n === 0 ? "Tick snapshots, then" : n === 1 ? "1 ticked:" : n + " ticked:";
    if (said.textContent !== text) said.textContent = text;
  }
  document.addEventListener("change", function (e) {
    if (e.target.matches && e.target.matches("input.pick")) countPicks();
  });

  function keepFocus() {
    if (document.activeElement && document.activeElement !== document.body) return;
    if (document.querySelector("#dialog-host dialog[open]")) return;
    var el = lastFocus && document.getElementById(lastFocus);
    if (el) el.focus();
  }

  function scan(node) {
    if (node.nodeType !== 1) return;
    var host = document.getElementById("dialog-host");
    if (host && host.contains(node)) {
      var dlg = node.matches("dialog") ? node : node.querySelector("dialog");
      if (dlg) openDialog(dlg);
    }
    goTo(node);
    var said = node.matches("[data-announce]") ? node : null;
    if (said) live(said.getAttribute("data-announce"));
    // A dialog that is done: fetch the part of the page it changed again,
    // then give focus back to what opened it.
    if (node.matches("[data-refresh]") && window.htmx) {
      var url = node.getAttribute("data-refresh"), target = node.getAttribute("data-refresh-target");
      if (!document.querySelector(target)) {
        // A dialog on its own page: go back to the page it came from.
        window.location.href = node.getAttribute("data-back");
        return;
      }
      if (host) host.innerHTML = "";
      // A morph, as the page's own refreshes: a menu opened meanwhile
      // stays open, and the focus in it stays.
      Promise.resolve(window.htmx.ajax("GET", url, { target: target, swap: "outerMorph" })).then(function () {
        window.setTimeout(refocus, 0);
      });
    }
  }

  // A fork's page, starting, opens the new box's own page when its
  // operation ends (the fragment that says so carries data-goto).
  function goTo(node) {
    var to = node.getAttribute && node.getAttribute("data-goto");
    if (to && to.charAt(0) === "/" && to.charAt(1) !== "/") window.location.assign(to);
  }

  // A restore the person started says how it ended, once, in a toast on
  // whatever page they are on; on the box's page its notice says it. The
  // server keeps the list in a cookie; the script asks while there is one.
  function toasts() {
    var host = document.getElementById("toasts");
    if (!host || document.cookie.indexOf("boxsnap_watch=") < 0) return;
    fetch("/toasts?here=" + encodeURIComponent(location.pathname), { credentials: "same-origin", headers: { "HX-Request": "true" } })
      .then(function (r) { return r.ok ? r.text() : ""; })
      .then(function (html) {
        if (html.trim()) host.insertAdjacentHTML("beforeend", html);
        if (document.cookie.indexOf("boxsnap_watch=") >= 0) window.setTimeout(toasts, 2000);
      }, function () {});
  }
  document.addEventListener("click", function (e) {
    var x = e.target.closest ? e.target.closest("[data-dismiss]") : null;
    if (x && x.parentElement) x.parentElement.remove();
  });
  // A part of a page fetched again keeps what a person opened: the morph
  // keeps each element by its id, and an open menu stays open (the new
  // HTML has no open attribute to give it), so the focus inside it stays.
  // htmx 4 asks its extensions before it changes an attribute in a morph.
  if (window.htmx && window.htmx.registerExtension) {
    window.htmx.registerExtension("boxsnap-keep-open", {
      htmx_before_morph_attr: function (elt, detail) {
        if (detail && detail.attrName === "open" && detail.newValue === null && elt.matches && elt.matches("details.menu, details.filters")) return false;
      }
    });
  }

  // Every open page follows the boxes it shows. The server's event stream
  // says which box changed, by anyone, in any process; the page then draws
  // its live region again in one request, which the server draws from one
  // read: the box page's #box-live from its own address (data-live), any
  // other following page its main (asked by htmx, the server answers the
  // page's content alone). Events during a refresh make one more.
  // A flash shown once stays until the person leaves the page: the main
  // drawn again for a followed change has none (the server said it once),
  // so the one shown goes into the new main before the morph, which then
  // keeps it as it is.
  var keepFlash = false;
  document.addEventListener("htmx:before:swap", function (e) {
    if (!keepFlash) return;
    keepFlash = false;
    var shown = document.getElementById("flash");
    var tasks = (e.detail && e.detail.tasks) || [];
    tasks.forEach(function (t) {
      var target = typeof t.target === "string" ? document.querySelector(t.target) : t.target;
      if (!shown || !t.fragment || !target || target.id !== "main") return;
      if (t.fragment.querySelector && t.fragment.querySelector("#flash")) return;
      t.fragment.insertBefore(shown.cloneNode(true), t.fragment.firstChild);
    });
  });

  function follow() {
    var marks = document.querySelectorAll("[data-follow]");
    if (!marks.length || !window.EventSource || !window.htmx) return;
    var boxes = [], all = false;
    marks.forEach(function (m) {
      var b = m.getAttribute("data-follow");
      if (b === "*") all = true;
      else if (b) boxes.push("box=" + encodeURIComponent(b));
    });
    var url = "/events" + (all || !boxes.length ? "" : "?" + boxes.join("&"));
    var busy = false, again = false, opened = false;
    function done() {
      busy = false;
      keepFlash = false;
      if (again) { again = false; refresh(); }
    }
    function refresh() {
      if (busy) { again = true; return; }
      busy = true;
      var region = document.getElementById("box-live");
      var p;
      if (region && region.getAttribute("data-live")) {
        p = window.htmx.ajax("GET", region.getAttribute("data-live"), { target: "#box-live", swap: "outerMorph" });
      } else {
        keepFlash = true;
        p = window.htmx.ajax("GET", location.pathname + location.search, { target: "#main", swap: "innerMorph" });
      }
      Promise.resolve(p).then(done, done);
    }
    var es = new EventSource(url);
    es.addEventListener("box", refresh);
    // A stream opened again may have missed changes meanwhile.
    es.addEventListener("open", function () {
      if (opened) refresh();
      opened = true;
      document.body.setAttribute("data-following", "");
    });
    es.addEventListener("error", function () { document.body.removeAttribute("data-following"); });
    window.addEventListener("pagehide", function () { es.close(); });
  }

  // After a dialog's restore, start asking.
  document.addEventListener("htmx:after:request", function () { window.setTimeout(toasts, 500); });

  document.addEventListener("DOMContentLoaded", function () {
    toasts();
    follow();
    document.querySelectorAll("dialog.dlg").forEach(wireUndo);
    new MutationObserver(function (records) {
      records.forEach(function (r) {
        if (r.type === "attributes") {
          if (r.attributeName === "data-goto") goTo(r.target);
          else live(r.target.getAttribute("data-announce"));
          return;
        }
        r.addedNodes.forEach(scan);
      });
      keepPicks();
      keepFocus();
    }).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-announce", "data-goto"] });
  });
})();

// Package pictures is the snapshots' pictures of a box's screen, taken and
// kept. Taker takes them: a box that serves its screen over HTTP is opened
// in a headless Chromium through Playwright, and the screenshot is resized
// to a JPEG 320 px wide at quality 70; one browser per process, started on
// the first picture. Pictures keeps them with the snapshots: a snapshot's
// picture read through the core's rules, the PictureTaker given (Taker, or
// a test's), a take's picture captured just before it and kept, and a
// restore's undo picture captured before its stop, held with the operation
// and kept once the undo is taken, all pictures capped at
// snapshots.PicturesCapBytes.
//
// Pictures holds only what it uses: the store, the taker, the clock and the
// logger; the one thing it needs of the core (a snapshot as a caller may
// see it) it reaches through its kernel interface, which *snapshots.Service
// satisfies, and app/boot gives the core this package through
// snapshots.Kernel.UsePictures, the PictureKeeper its restore calls, and
// the take (package take) through take.Take.UsePictures. The two live together because they are one feature, a picture of
// a screen, and neither imports anything the other does not; the core
// never imports this package. words.go holds the words it alone says.
//
// It must never import app/web, app/api, app/cli, jobs, a provider's
// subpackage, nor a seam of the core (a package under app/snapshots/).
package pictures

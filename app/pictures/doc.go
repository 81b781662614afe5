// Package pictures takes a box's picture of the screen for the snapshot core:
// a box that serves its screen over HTTP is opened in a headless Chromium
// through Playwright, and the screenshot is resized to a JPEG 320 px wide at
// quality 70. One browser per process, started on the first picture. It
// implements snapshots.PictureTaker; it must never import web, api or jobs,
// nor a provider.
package pictures

// Package e2e holds boxsnap's browser tests (playwright-go driving
// Debian's Chromium against a real server and PostgreSQL, in-process) and
// Stack, the in-process boxsnap with demo data that the tests and the
// screenshot run share. It imports the app's packages as boot does; nothing
// in the app may import it.
package e2e

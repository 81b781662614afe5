// Package web serves boxsnap's pages: one route table (routes.go), one
// handler per file named for what it does, sign-in and sessions, and River's
// dashboard at /jobs behind sign-in. Pages render through views; every
// state-changing request passes the standard library's cross-origin
// protection. It calls the core and auth; it must never import jobs or a
// provider.
package web

// Package boot starts and stops a boxsnap process: the database (the
// embedded cluster or DATABASE_URL), the migrations, River's client and
// workers, River's dashboard and the web server, in order, and stops them in
// the reverse order on SIGINT or SIGTERM. main.go calls it; nothing else does.
package boot

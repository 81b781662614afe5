// Package boot starts and stops a boxsnap process: the database (the
// embedded cluster or DATABASE_URL), the migrations, River's client and
// workers, River's dashboard and the web server, in order, and stops them in
// the reverse order on SIGINT or SIGTERM. main.go calls it, and so do the
// screenshots command and the Proxmox demo's test; no package of the app
// does.
package boot

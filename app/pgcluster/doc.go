// Package pgcluster runs a private PostgreSQL cluster from the machine's
// PostgreSQL binaries: boxsnap's embedded default when no DATABASE_URL is
// given, and the one cluster per test process that app/dbtest starts.
//
// Start makes the cluster on first use (initdb into a temporary folder beside
// the data folder, then a rename, so a failed initdb leaves nothing behind),
// then starts it with pg_ctl and waits until it accepts connections. The
// server listens on a unix socket only (listen_addresses is empty), in a short
// socket folder of mode 0700, and trusts whoever reaches that socket: only the
// cluster's OS user (and root) can. Its own log goes to postgresql.log in the
// data folder, never to boxsnap's output.
//
// PostgreSQL refuses to run as root. When boxsnap runs as root, the binaries
// run as the OS user postgres: the data and socket folders are given to that
// user, and any parent folder of the data folder that the user cannot search
// gets the search bit for others (o+x, never read or write), each such folder
// logged. When boxsnap is not root, the binaries run as the current user.
//
// A Cluster holds an exclusive flock on <data folder>.lock, beside the data
// folder, for its whole life, so that two boxsnaps never run one cluster.
//
// It must never import any other package of boxsnap.
package pgcluster

#!/bin/sh
# Benchmarks the local backend's change journal beside rsync --link-dest and
# restic backup on one tree (see main.go). Usage:
#   bench/journal/run.sh [flags of main.go, e.g. -files 100000 -bytes 2147483648 -runs 3]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
missing=""
command -v rsync >/dev/null 2>&1 || missing="$missing rsync"
command -v restic >/dev/null 2>&1 || missing="$missing restic"
if [ -n "$missing" ]; then
	echo "installing from Debian's packages:$missing"
	apt-get install -y $missing >/dev/null
fi
echo "rsync: $(rsync --version | head -1)"
echo "restic: $(restic version)"
cd "$here/../.."
go build -o /tmp/boxsnap-bench-journal ./bench/journal
/tmp/boxsnap-bench-journal "$@"

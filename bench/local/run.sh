#!/bin/sh
# Benchmarks the local backend side by side with cp -a, rsync --link-dest and
# restic backup on one 20,000-file, 1 GiB tree (see main.go). Usage:
#   bench/local/run.sh [work folder] [runs]
# Page caches cannot be dropped on this machine, so every tool reads a warm
# tree; the figures say so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-/tmp/boxsnap-bench}
runs=${2:-3}
missing=""
command -v rsync >/dev/null 2>&1 || missing="$missing rsync"
command -v restic >/dev/null 2>&1 || missing="$missing restic"
if [ -n "$missing" ]; then
	echo "installing from Debian's packages:$missing"
	apt-get install -y $missing >/dev/null
fi
echo "rsync: $(rsync --version | head -1)"
echo "restic: $(restic version)"
echo "cp: $(cp --version | head -1)"
cd "$here/../.."
go build -o /tmp/boxsnap-bench-local ./bench/local
echo "== with the take's syncfs (boxsnap's default) =="
/tmp/boxsnap-bench-local -dir "$work" -runs "$runs"
echo "== without it (-nosync), as cp -a, rsync and restic do not sync either =="
/tmp/boxsnap-bench-local -dir "$work" -runs "$runs" -nosync
rm -rf "$work"

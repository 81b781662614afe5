#!/bin/sh
# Benchmarks Compare with now beside diff -rq and rsync -an
# --delete --itemize-changes on one 100,000-file box with 1% changed (see
# main.go). Usage:
#   bench/compare/run.sh [work folder] [runs]
# Page caches cannot be dropped on this machine, so every tool reads a warm
# tree; the figures say so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-/tmp/boxsnap-bench-compare}
runs=${2:-5}
command -v rsync >/dev/null 2>&1 || { echo "installing rsync from Debian's packages"; apt-get install -y rsync >/dev/null; }
echo "rsync: $(rsync --version | head -1)"
echo "diff: $(diff --version | head -1)"
cd "$here/../.."
go build -o /tmp/boxsnap-bench-compare ./bench/compare
/tmp/boxsnap-bench-compare -dir "$work" -runs "$runs"
rm -rf "$work"

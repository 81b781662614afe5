#!/bin/sh
# What a restore's or a fork's sync before "done" costs: one syncfs of the
# file system, or an fsync of each file written, on a copy of /usr/share
# (see main.go).
# Usage: bench/durable/run.sh [work folder] [rounds]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-/tmp/boxsnap-bench-durable}
rounds=${2:-1}
cd "$here/../.."
go build -o /tmp/boxsnap-bench-durable.bin ./bench/durable
echo "tree: /usr/share, $(find /usr/share | wc -l) paths, $(du -sh /usr/share | cut -f1)"
/tmp/boxsnap-bench-durable.bin -src /usr/share -dir "$work" -rounds "$rounds"

#!/bin/sh
# The content store's repack on a churned box, with versitygw on loopback
# and a private PostgreSQL (see main.go).
# Usage: bench/repack/run.sh [work folder] [extra flags, e.g. -rounds 8]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-/tmp/boxsnap-bench-repack}
[ $# -gt 0 ] && shift
cd "$here/../.."
scripts/need-versitygw.sh "$PWD/.cache/bin/versitygw"
go build -o /tmp/boxsnap-bench-repack.bin ./bench/repack
BOXSNAP_VERSITYGW="$PWD/.cache/bin/versitygw" /tmp/boxsnap-bench-repack.bin -dir "$work" "$@"

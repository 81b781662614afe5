#!/bin/sh
# The local backend with a content store beside restic backup and rclone
# sync, to one versitygw on loopback, on a copy of /usr/share (see main.go).
# Usage: bench/bucket/run.sh [work folder] [runs]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-/tmp/boxsnap-bench-bucket}
runs=${2:-1}
missing=""
command -v restic >/dev/null 2>&1 || missing="$missing restic"
command -v rclone >/dev/null 2>&1 || missing="$missing rclone"
if [ -n "$missing" ]; then
	echo "installing from Debian's packages:$missing"
	apt-get install -y $missing >/dev/null
fi
cd "$here/../.."
scripts/need-versitygw.sh "$PWD/.cache/bin/versitygw"
echo "restic: $(restic version)"
echo "rclone: $(rclone version | head -1)"
go build -o /tmp/boxsnap-bench-bucket.bin ./bench/bucket
BOXSNAP_VERSITYGW="$PWD/.cache/bin/versitygw" /tmp/boxsnap-bench-bucket.bin -dir "$work" -runs "$runs" ${BENCH_FLAGS:-}

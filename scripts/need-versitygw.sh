#!/usr/bin/env bash
# The local backend's content-store tests start a real S3 server of their
# own on loopback: versitygw (an S3 gateway over a folder), built from the
# module proxy in its own tools module (tools/s3server), never the product's
# go.mod. Builds it into ./.cache/bin only when missing (about 4 minutes):
#   scripts/need-versitygw.sh BIN
set -euo pipefail
bin=$1
if [ -x "$bin" ]; then
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "make: Go is not installed: install Go 1.26 or newer (https://go.dev/doc/install)" >&2
  exit 1
fi
echo "make: building versitygw into $(dirname "$bin") for the content-store tests (go build in tools/s3server; about 4 minutes the first time)"
mkdir -p "$(dirname "$bin")"
out="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
cd "$(dirname "$0")/../tools/s3server"
go build -o "$out" github.com/versity/versitygw/cmd/versitygw

#!/usr/bin/env bash
# sqlc makes app/store/db from sql/queries (make sqlc; make test checks it is
# fresh). Installs the pinned version into ./.cache/bin, only when missing:
#   scripts/need-sqlc.sh VERSION BIN
set -euo pipefail
version=$1
bin=$2
if [ -x "$bin" ] && [ "$("$bin" version 2>/dev/null)" = "v$version" ]; then
  exit 0
fi
if ! command -v go >/dev/null; then
  echo "make: Go is not installed: install Go 1.26 or newer (https://go.dev/doc/install)" >&2
  exit 1
fi
echo "make: installing sqlc v$version into $(dirname "$bin") (go install github.com/sqlc-dev/sqlc/cmd/sqlc@v$version; it builds with cgo, a minute or two the first time)"
mkdir -p "$(dirname "$bin")"
GOBIN="$(cd "$(dirname "$bin")" && pwd)" go install "github.com/sqlc-dev/sqlc/cmd/sqlc@v$version"

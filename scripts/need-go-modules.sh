#!/usr/bin/env bash
# Downloads the Go modules go.mod lists, only when some are missing.
set -euo pipefail
if ! command -v go >/dev/null; then
  echo "make: Go is not installed: install Go 1.26 or newer (https://go.dev/doc/install)" >&2
  exit 1
fi
if go list -m -mod=readonly all >/dev/null 2>&1 && go list -deps ./... >/dev/null 2>&1; then
  exit 0
fi
echo "make: downloading Go modules (go mod download)"
go mod download

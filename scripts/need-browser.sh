#!/usr/bin/env bash
# The browser tests drive Debian's chromium through playwright-go, whose
# driver is npm's playwright-core of the version the Go module expects, run
# with this machine's node (never a download from a CDN). axe-core checks
# accessibility. Each is installed only when missing.
set -euo pipefail
driver_dir=$1 version=$2 axe_dir=$3
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "make: chromium is missing: install it (Debian: apt-get install chromium)" >&2
    exit 1
  fi
  echo "make: installing Debian's chromium (apt-get install chromium)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if ! command -v node >/dev/null; then
  echo "make: node is missing: install Node.js 20 (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
if [ ! -f "$driver_dir/package/cli.js" ]; then
  echo "make: fetching npm's playwright-core@$version into $driver_dir"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "playwright-core@$version" >/dev/null && mkdir -p "$driver_dir" && tar xzf "playwright-core-$version.tgz" -C "$driver_dir")
  rm -rf "$tmp"
fi
if [ ! -f "$axe_dir/axe.min.js" ]; then
  echo "make: fetching npm's axe-core into $axe_dir"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent axe-core@4 >/dev/null && tar xzf axe-core-*.tgz && mkdir -p "$axe_dir" && cp package/axe.min.js "$axe_dir/")
  rm -rf "$tmp"
fi

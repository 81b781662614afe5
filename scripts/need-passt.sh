#!/usr/bin/env bash
# A local box whose template allows network reaches outside networks through
# pasta, from Debian's passt, in its own network namespace (README, "Security
# model"); installs passt only when pasta is missing. Without it boxsnap still
# runs, and its boxes have no network at all.
set -euo pipefail
if command -v pasta >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "make: passt (pasta) is missing: local boxes will have no network (Debian: apt-get install passt)" >&2
  exit 0
fi
echo "make: installing passt, whose pasta gives local boxes their own network (apt-get install passt)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq passt >/dev/null

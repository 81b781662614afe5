#!/usr/bin/env bash
# The Docker backend's tests start a private dockerd of their own (its data
# root and socket under the test's temporary folder) and build their images
# with `docker import` from a static busybox: installs Debian's docker.io and
# busybox-static only when missing. `make run` never needs them.
set -euo pipefail
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
[ -x /bin/busybox ] || missing+=(busybox-static)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "make: the Docker backend's tests need ${missing[*]} (Debian: apt-get install ${missing[*]}); without them they skip" >&2
  exit 0
fi
echo "make: installing ${missing[*]} for the Docker backend's tests (apt-get install ${missing[*]})"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null

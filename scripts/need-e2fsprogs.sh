#!/usr/bin/env bash
# A local box's folder is an ext4 file system of its own, made with
# mkfs.ext4 from Debian's e2fsprogs, so its disk bound holds to the byte
# (README, "Security model"); installs e2fsprogs only when mkfs.ext4 is
# missing. Without it boxsnap still runs, and bounds a box's disk with a
# watch instead.
set -euo pipefail
if command -v mkfs.ext4 >/dev/null || [ -x /sbin/mkfs.ext4 ] || [ -x /usr/sbin/mkfs.ext4 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "make: mkfs.ext4 is missing: a local box's disk will be bounded by a watch, not to the byte (Debian: apt-get install e2fsprogs)" >&2
  exit 0
fi
echo "make: installing e2fsprogs, whose mkfs.ext4 gives each local box a file system of its own (apt-get install e2fsprogs)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq e2fsprogs >/dev/null

#!/usr/bin/env bash
# A local box's process runs inside bubblewrap where it is installed (README,
# "Security model"); installs Debian's bubblewrap only when bwrap is missing.
# Without it boxsnap still runs, and its log says what is not isolated.
set -euo pipefail
if command -v bwrap >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "make: bubblewrap (bwrap) is missing: box processes will run without its sandbox (Debian: apt-get install bubblewrap)" >&2
  exit 0
fi
echo "make: installing bubblewrap, the sandbox of local box processes (apt-get install bubblewrap)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null

#!/usr/bin/env bash
# boxsnap's embedded default runs PostgreSQL's own binaries; installs them from
# Debian's packages only when none are found.
set -euo pipefail
if command -v pg_ctl >/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "make: PostgreSQL's binaries are missing: install them (Debian: apt-get install postgresql), or set DATABASE_URL" >&2
  exit 1
fi
echo "make: installing PostgreSQL's binaries (apt-get install postgresql)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null

#!/usr/bin/env bash
# The QEMU backend's tests start a private libvirtd of their own (its
# runtime, config and socket under the test's temporary folder) and boot
# guests built from Debian's packages (the kernel unpacked from
# linux-image-amd64, a busybox root file system on ext4 in a qcow2):
# installs Debian's qemu-system-x86, qemu-utils, libvirt-daemon-system and
# libvirt-clients only when missing. `make run` never needs them.
set -euo pipefail
missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
command -v qemu-img >/dev/null || missing+=(qemu-utils)
command -v libvirtd >/dev/null || [ -x /usr/sbin/libvirtd ] || missing+=(libvirt-daemon-system)
command -v virsh >/dev/null || missing+=(libvirt-clients)
[ -x /bin/busybox ] || missing+=(busybox-static)
command -v mkfs.ext4 >/dev/null || [ -x /usr/sbin/mkfs.ext4 ] || missing+=(e2fsprogs)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "make: the QEMU backend's tests need ${missing[*]} (Debian: apt-get install --no-install-recommends ${missing[*]}); without them they skip" >&2
  exit 0
fi
echo "make: installing ${missing[*]} for the QEMU backend's tests (apt-get install --no-install-recommends ${missing[*]})"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/bin/sh
# Times a fork of the local backend's box holding a real tree into N boxes
# in one call (one take, N forks of it) beside N single forks (each its own
# take, then its fork) and beside cp -a of the tree N times, in one run,
# alternating. Usage:
#   bench/forkmany/run.sh [tree] [n] [runs] [snapshotted]
# The tree defaults to /usr/share (about 46,000 files here). With a fourth
# argument "snapshotted" the source box holds a snapshot of the tree before
# the clock starts, as an agent's box does, so the timed first take copies
# nothing new; by default the timed part includes the tree's first copy
# into the store. Page caches cannot be dropped on this machine: every run
# reads a warm tree; what was written before each timed part is synced
# first, and each part ends with a sync of what it wrote.
# Each part runs in an ext4 file system made for it (an image in the work
# folder, mounted with a loop device; run as root), so no part pays for
# another's deletes: ext4 hands out an inode freed in the last minutes
# only after scanning past it, which made a part run just after another's
# clean-up up to five times slower. BENCH_FS=host runs every part in the
# work folder on the host's own file system instead; there BENCH_SETTLE=
# seconds waits that long after each part's files are removed (310 spares
# a part the last one's deletes on ext4 without a journal).
set -eu
settle=${BENCH_SETTLE:-0}
fs=${BENCH_FS:-fresh}
here=$(cd "$(dirname "$0")" && pwd)
tree=${1:-/usr/share}
n=${2:-10}
runs=${3:-3}
snap=
if [ "${4:-}" = snapshotted ]; then snap=-snapshotted; fi
cd "$here/../.."
work=$(mktemp -d /tmp/boxsnap-forkmany.XXXXXX)
part=$work/part
# fresh makes the file system the next part runs in, at $part.
fresh() {
	mkdir -p "$part"
	if [ "$fs" = host ]; then return; fi
	truncate -s 64G "$work/part.img"
	mkfs.ext4 -q -F "$work/part.img"
	mount -o loop "$work/part.img" "$part"
}
# spent removes what a part left, and its file system.
spent() {
	if [ "$fs" = host ]; then rm -rf "$part"; sleep "$settle"; return; fi
	umount "$part"
	rm -f "$work/part.img"
}
trap 'mountpoint -q "$part" && umount "$part"; rm -rf "$work"' EXIT
go build -o "$work/bench" ./bench/forkmany
fresh
echo "tree: $tree ($(find "$tree" -type f | wc -l) files); forks: $n; runs: $runs; ${4:-first take timed}; $(df -T "$part" | awk 'NR==2 { print $2 }')$([ "$fs" = host ] || echo ", made for each part")"
spent
for i in $(seq "$runs"); do
	for m in many single; do
		fresh
		sync
		echo "$m $("$work/bench" -tree "$tree" -dir "$part/run" -mode "$m" -n "$n" $snap)"
		spent
	done
	fresh
	sync
	s=$(date +%s%N)
	for j in $(seq "$n"); do cp -a "$tree/." "$part/$j"; done
	sync
	e=$(date +%s%N)
	echo "cp cp_ms=$(( (e - s) / 1000000 ))"
	spent
done | tee "$work/out"
awk -v n="$n" '
function med(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((k + 1) / 2)] }
{ for (f = 2; f <= NF; f++) { split($f, kv, "="); k = kv[1]; c[k]++; v[k, c[k]] = kv[2] } }
END {
	for (k in c) { for (i = 1; i <= c[k]; i++) a[i] = v[k, i]; m[k] = med(a, c[k]) }
	printf "median: one call into %d: %.0f ms; %d single forks: %.0f ms (single/one call %.2f); cp -a x%d: %.0f ms (one call/cp %.2f)\n", n, m["many_ms"], n, m["single_ms"], m["single_ms"] / m["many_ms"], n, m["cp_ms"], m["many_ms"] / m["cp_ms"]
	printf "median disk the %d forks hold: one call %.0f MiB, single forks %.0f MiB\n", n, m["many_forks_kib"] / 1024, m["single_forks_kib"] / 1024
	printf "median CPU time boxsnap spent (other work on the host moves it less than the wall time): one call %.0f ms; single forks %.0f ms (single/one call %.2f)\n", m["many_cpu_ms"], m["single_cpu_ms"], m["single_cpu_ms"] / m["many_cpu_ms"]
	# Both modes make the same first take, which copies what the store
	# lacks: a one call that cost nothing past it would be this much faster.
	printf "median first take: in the one call %.0f ms (CPU %.0f ms), in the single forks %.0f ms (CPU %.0f ms); the one call past it %.0f ms (CPU %.0f ms); the bound, single forks over their own first take: %.2f (CPU %.2f)\n", m["many_first_ms"], m["many_first_cpu_ms"], m["single_first_ms"], m["single_first_cpu_ms"], m["many_ms"] - m["many_first_ms"], m["many_cpu_ms"] - m["many_first_cpu_ms"], m["single_ms"] / m["single_first_ms"], m["single_cpu_ms"] / m["single_first_cpu_ms"]
}' "$work/out"

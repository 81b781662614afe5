#!/bin/sh
# Times the local backend's takes of a real tree through its confined handles
# (this checkout) beside the same takes by an earlier commit and beside cp -a
# of the tree, in one run, alternating. Usage:
#   bench/confined/run.sh [tree] [base commit] [runs]
# The tree defaults to /usr/share (about 46,000 files here). Page caches
# cannot be dropped on this machine: every run reads a warm tree; what was
# written before each timed part is synced first.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tree=${1:-/usr/share}
base=${2:-28ad1f6}
runs=${3:-5}
cd "$here/../.."
work=$(mktemp -d /tmp/boxsnap-confined.XXXXXX)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
go build -o "$work/new" ./bench/confined
git worktree add -q --detach "$work/base" "$base"
mkdir -p "$work/base/bench/confined"
cp bench/confined/main.go "$work/base/bench/confined/"
(cd "$work/base" && go build -o "$work/old" ./bench/confined)
echo "tree: $tree; base: $(git log --oneline -1 "$base" | cut -c1-60); runs: $runs"
for i in $(seq "$runs"); do
	for v in old new; do
		sync
		echo "$v $("$work/$v" -tree "$tree" -dir "$work/run")"
	done
	rm -rf "$work/cp"
	sync
	s=$(date +%s%N)
	cp -a "$tree/." "$work/cp"
	e=$(date +%s%N)
	echo "cp cp_ms=$(( (e - s) / 1000000 ))"
done | tee "$work/out"
awk '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((n + 1) / 2)] }
{ for (f = 2; f <= NF; f++) { split($f, kv, "="); k = $1 "." kv[1]; n[k]++; v[k, n[k]] = kv[2] } }
END {
	for (k in n) { for (i = 1; i <= n[k]; i++) a[i] = v[k, i]; m[k] = med(a, n[k]) }
	printf "median full take: new %.0f ms, old %.0f ms (new/old %.2f); cp -a %.0f ms (new/cp %.2f)\n", m["new.full_ms"], m["old.full_ms"], m["new.full_ms"] / m["old.full_ms"], m["cp.cp_ms"], m["new.full_ms"] / m["cp.cp_ms"]
	printf "median incremental take: new %.0f ms, old %.0f ms (new/old %.2f)\n", m["new.incremental_ms"], m["old.incremental_ms"], m["new.incremental_ms"] / m["old.incremental_ms"]
}' "$work/out"

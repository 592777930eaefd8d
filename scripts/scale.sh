#!/usr/bin/env bash
# scale.sh — scale evidence for run, run --cache and run --shard + merge on a
# generated corpus (made on the fly in a temporary directory, never kept):
#
#   scripts/scale.sh [SIZE] [SHARDS]      # SIZE for gen --bytes (1GiB), SHARDS (4)
#
# Prints wall time, CPU time (user+sys) and peak RSS (GNU time's maximum
# resident set size) of each step, and checks that the warm cached run and
# the merged shards wrote the cold run's bytes. Every step runs under
# nice -n ${NICE:-10} (a shared machine). PLAIN=0 skips the run without a
# cache (the cold --cache run is then the cold run); COLD=1 runs only gen
# and the cold run without a cache (the peak-RSS trend over sizes, e.g.
# for s in 1GiB 2GiB 4GiB; do COLD=1 scripts/scale.sh $s; done); CB picks
# the binary (default: bin/compactbench, built); TMPDIR picks where the
# corpus goes. Needs GNU time (/usr/bin/time). Not run in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-1GiB}
n=${2:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cb=${CB:-bin/compactbench}
[ -n "${CB:-}" ] || make -s build

step() { # step NAME CMD...: one line of figures
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" nice -n "${NICE:-10}" "$@" >/dev/null 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; exit 1; }
	read -r wall user sys rss <"$tmp/time"
	printf '%-28s %8.1f s wall %8.1f s cpu %7.0f MB peak RSS\n' "$name" "$wall" "$(echo "$user + $sys" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
}

step "gen --bytes $size" "$cb" gen --bytes "$size" --quiet "$tmp/corpus"
echo "corpus: $(du -sh "$tmp/corpus" | cut -f1), $(find "$tmp/corpus" -name '*.jsonl' | wc -l) files; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${COLD:-0}" = 1 ]; then
	step "run (cold, no cache)" "$cb" run -q --no-progress -o "$tmp/plain" "$tmp/corpus"
	exit 0
fi
step "run --cache (cold)" "$cb" run -q --no-progress --cache "$tmp/cache" -o "$tmp/cold" "$tmp/corpus"
ref="$tmp/cold"
if [ "${PLAIN:-1}" != 0 ]; then
	step "run (cold, no cache)" "$cb" run -q --no-progress -o "$tmp/plain" "$tmp/corpus"
	diff -r "$tmp/plain" "$tmp/cold" >/dev/null && echo "cold cached run == run without cache: identical" || echo "cold cached run DIFFERS"
	ref="$tmp/plain"
fi
step "run --cache (warm)" "$cb" run -q --no-progress --cache "$tmp/cache" -o "$tmp/warm" "$tmp/corpus"
echo "cache: $(du -sh "$tmp/cache" | cut -f1)"
for ((k = 1; k <= n; k++)); do
	step "run --shard $k/$n" "$cb" run -q --no-progress --shard "$k/$n" -o "$tmp/shard-$k" "$tmp/corpus"
done
step "merge ($n shards)" "$cb" merge -q -o "$tmp/merged" $(for ((k = 1; k <= n; k++)); do echo "$tmp/shard-$k"; done)
diff -r "$ref" "$tmp/warm" >/dev/null && echo "warm cached run == cold run: identical" || echo "warm cached run DIFFERS"
diff -r "$ref" "$tmp/merged" >/dev/null && echo "merged shards == unsharded run: identical" || echo "merged shards DIFFER"

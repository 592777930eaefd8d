#!/usr/bin/env bash
# bench-vs-ccusage.sh — times a full default `compactbench run` side by side
# with ccusage (a tool that only scans Claude Code logs for usage) on the same
# files, and prints the ratio. Not run in CI: it installs ccusage from npm
# into a temporary directory.
#
#   scripts/bench-vs-ccusage.sh [CORPUS] [RUNS]
#
# CORPUS defaults to ../shared/real-corpus, RUNS to 5; CCUSAGE sets the npm
# package (default ccusage@20.0.24, the newest release whose native linux-x64
# binary is published); CB times another compactbench binary instead of
# building this checkout's. The tools run alternately, so that both meet the
# same load. Both tools read the
# corpus through a symlinked projects/ directory (ccusage's layout). Times are
# the median of RUNS runs, wall clock and CPU (user+sys); on a shared machine
# prefer the CPU ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$(realpath "${1:-../shared/real-corpus}")
runs=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "installing ccusage into $tmp/npm ..." >&2
npm install --prefix "$tmp/npm" --no-audit --no-fund --loglevel=error "${CCUSAGE:-ccusage@20.0.24}" >/dev/null
ccusage="$tmp/npm/node_modules/.bin/ccusage"
mkdir -p "$tmp/claude"
ln -s "$corpus" "$tmp/claude/projects"

cb=${CB:-}
if [ -z "$cb" ]; then
	make -s build
	cb=bin/compactbench
fi

# measure CMD...: prints "wall cpu" in seconds for one run.
measure() {
	local t0 t1 c0 c1
	c0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>"$tmp/stderr" || { echo "$* failed:" >&2; cat "$tmp/stderr" >&2; exit 1; }
	t1=$(date +%s.%N)
	c1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
	# children's user+sys ticks (cutime, cstime) of this shell
	echo "$(echo "$t1 - $t0" | bc -l) $(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l)"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

run_cb() { "$cb" run -q --no-progress -o "$tmp/out" "$corpus"; }
run_cc() { CLAUDE_CONFIG_DIR="$tmp/claude" "$ccusage" daily --json --offline; }

declare -A wall cpu
: >"$tmp/compactbench.times"
: >"$tmp/ccusage.times"
for ((i = 0; i < runs; i++)); do
	measure run_cb >>"$tmp/compactbench.times"
	measure run_cc >>"$tmp/ccusage.times"
done
for tool in compactbench ccusage; do
	wall[$tool]=$(cut -d' ' -f1 "$tmp/$tool.times" | median)
	cpu[$tool]=$(cut -d' ' -f2 "$tmp/$tool.times" | median)
done
size=$(du -sbL "$corpus" | cut -f1)
printf 'corpus %s (%.1f MB), median of %d runs, %d CPUs\n' "$corpus" "$(echo "$size / 1000000" | bc -l)" "$runs" "$(nproc)"
printf '%-13s wall %6.3f s  cpu %6.3f s\n' compactbench "${wall[compactbench]}" "${cpu[compactbench]}"
printf '%-13s wall %6.3f s  cpu %6.3f s  (%s)\n' ccusage "${wall[ccusage]}" "${cpu[ccusage]}" "$("$ccusage" --version 2>/dev/null | tail -1)"
printf 'ratio compactbench/ccusage: wall %.2f, cpu %.2f\n' \
	"$(echo "${wall[compactbench]} / ${wall[ccusage]}" | bc -l)" "$(echo "${cpu[compactbench]} / ${cpu[ccusage]}" | bc -l)"

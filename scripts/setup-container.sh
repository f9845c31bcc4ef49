#!/usr/bin/env bash
# Set up a container engine and build the project's Macaulay2 image.
#
# Where a Docker engine answers (`docker info`), it is used as is.  Otherwise
# podman is installed (Debian packages podman, runc, debootstrap) and
# configured in /etc/containers/containers.conf (runc, cgroupfs, ulimits);
# without access to Docker Hub the base image debian:bookworm-slim is made
# with debootstrap and imported.  Then docker/build.sh builds the image from
# docker/Dockerfile.  Idempotent: each step checks what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "[setup-container] $*"; }

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  log "using the Docker engine"
  exec bash docker/build.sh
fi

need=()
for p in podman runc debootstrap; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "[setup-container] need root to install ${need[*]}" >&2; exit 1
  fi
  log "apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

conf=/etc/containers/containers.conf
if ! grep -q "ag-attention" "$conf" 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    log "writing $conf (runc, cgroupfs, ulimits)"
    mkdir -p /etc/containers
    [ -f "$conf" ] && cp "$conf" "$conf.before-ag-attention"
    cat > "$conf" <<'CONF'
# written by ag-attention scripts/setup-container.sh
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
  else
    log "not root: leaving $conf alone (podman may need runtime=runc, cgroup_manager=cgroupfs)"
  fi
fi

base=docker.io/library/debian:bookworm-slim
if ! podman image exists "$base"; then
  if podman pull -q "$base" >/dev/null 2>&1; then
    log "pulled $base"
  else
    log "no registry access: building $base with debootstrap (a few minutes)"
    dir=$(mktemp -d /var/tmp/ag-attention-rootfs.XXXXXX)
    trap 'rm -rf "$dir"' EXIT
    debootstrap --variant=minbase bookworm "$dir" http://deb.debian.org/debian >/dev/null
    tar -C "$dir" -c . | podman import - "$base" >/dev/null
    rm -rf "$dir"
    trap - EXIT
  fi
fi
exec bash docker/build.sh

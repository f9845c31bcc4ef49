#!/usr/bin/env bash
# PyTorch for the tests that read a real torch module (tests/point/test_torch.py), where a CPU build can be had
# without CUDA: the package itself never needs torch (Network.from_torch is duck-typed).
#
# Why not a plain `pip install torch`: on x86_64 PyPI's torch is the CUDA build, 5.4 GB of libraries and 510 s
# to install here, and without them it does not import. So:
#   * a CPU wheel lying on this machine (/opt/wheels, or $AG_ATTENTION_TORCH_WHEEL) is installed (--no-deps),
#     then its dependencies from requirements/torch-deps.txt (hashes);
#   * on aarch64, PyPI's torch is a CPU build: requirements/torch-aarch64.txt (hashes);
#   * otherwise torch is not installed and the torch tests are skipped, saying why.
# On both paths, Hugging Face transformers then goes in from requirements/transformers.txt (hashes; a pure Python
# wheel, its binary dependencies hashed for x86_64 and aarch64 alike): the tests build real checkpoints with
# save_pretrained, from no download (tests/point/hf_checkpoints.py). A venv that has torch but not transformers
# (set up before transformers was added) gets it on the next run.
# Writes .stamps/torch: "installed" (torch and transformers import) or "unavailable: REASON" (make test requires
# the torch tests when installed).
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-$PWD/.venv}
PY=$VENV/bin/python
mkdir -p .stamps
say() { echo "[setup-torch] $*"; }
# transformers and its dependencies, once torch imports (HF_HUB_OFFLINE: importing it must reach no hub)
with_transformers() {
  HF_HUB_OFFLINE=1 "$PY" -c "import transformers" 2>/dev/null && return 0
  say "installing transformers and its dependencies (requirements/transformers.txt)"
  "$PY" -m pip install -q --require-hashes --no-deps -r requirements/transformers.txt \
    && HF_HUB_OFFLINE=1 "$PY" -c "import torch, transformers" 2>/dev/null
}
no_transformers="transformers (requirements/transformers.txt) did not install or import beside torch"
if "$PY" -c "import torch" 2>/dev/null; then
  if with_transformers; then
    echo installed > .stamps/torch
    exit 0
  fi
  say "$no_transformers: the torch tests are not required (those that need transformers are skipped)"
  echo "unavailable: $no_transformers" > .stamps/torch
  exit 0
fi
arch=$(uname -m)
pytag=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
wheel=${AG_ATTENTION_TORCH_WHEEL:-}
if [ -z "$wheel" ]; then
  wheel=$(ls /opt/wheels/torch-*+cpu-"$pytag"-"$pytag"-*"$arch".whl 2>/dev/null | sort | tail -n 1)
fi
if [ -n "$wheel" ] && [ -f "$wheel" ]; then
  say "installing $(basename "$wheel") (a CPU build on this machine) and its dependencies (requirements/torch-deps.txt)"
  if "$PY" -m pip install -q --no-deps "$wheel" \
     && "$PY" -m pip install -q --require-hashes --no-deps -r requirements/torch-deps.txt \
     && "$PY" -c "import torch" 2>/dev/null; then
    if with_transformers; then
      echo installed > .stamps/torch
      exit 0
    fi
    reason=$no_transformers
  else
    reason="the CPU wheel $wheel did not install or import"
  fi
elif [ "$arch" = aarch64 ]; then
  say "installing PyPI's torch for aarch64 (a CPU build; requirements/torch-aarch64.txt)"
  if "$PY" -m pip install -q --require-hashes --no-deps -r requirements/torch-aarch64.txt \
     && "$PY" -c "import torch" 2>/dev/null; then
    if with_transformers; then
      echo installed > .stamps/torch
      exit 0
    fi
    reason=$no_transformers
  else
    reason="PyPI's aarch64 torch did not install or import"
  fi
else
  reason="no CPU build of PyTorch for $arch/$pytag on this machine (/opt/wheels, AG_ATTENTION_TORCH_WHEEL), and PyPI's is the CUDA build"
fi
say "$reason: the torch tests are skipped"
echo "unavailable: $reason" > .stamps/torch
exit 0

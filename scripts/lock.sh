#!/usr/bin/env bash
# Refresh the lock files that scripts/setup.sh installs from (requirements/*.txt).
#
#   scripts/lock.sh            re-resolve after a change to pyproject.toml or requirements/*.in,
#                              keeping every version already locked where it still fits
#   scripts/lock.sh --upgrade  take the newest versions the registry serves today
#
# Why uv: `uv pip compile --universal` resolves once for every platform and Python version the
# package supports (requires-python >= 3.10; x86_64 and aarch64 alike), writing environment markers
# where versions must differ, with the sha256 of every file on the index.  pip-tools resolves for the
# machine it runs on only.  The output is a plain requirements file, so installing needs nothing but
# pip (`pip install --require-hashes -r requirements/lock.txt`); uv is only needed here, to refresh.
# uv runs from a throw-away venv (pinned version), so nothing is installed into the project's venv.
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=0.13.9
upgrade=()
for arg in "$@"; do
  case "$arg" in
    --upgrade) upgrade=(--upgrade) ;;
    *) echo "lock.sh: unknown option $arg (only --upgrade)" >&2; exit 2 ;;
  esac
done
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools/venv"
"$tools/venv/bin/python" -m pip install -q "uv==$UV_VERSION"
uv=$tools/venv/bin/uv
common=(--universal --python-version 3.10 --generate-hashes --no-header --quiet "${upgrade[@]}")
# the package's dependencies with every extra that scripts/setup.sh installs, and pip
"$uv" pip compile pyproject.toml requirements/tools.in \
  --extra test --extra plot --extra docs --extra frames --extra sweep \
  "${common[@]}" -o requirements/lock.txt
# msolve's wheel alone (installed with --no-deps; it needs Python >= 3.11)
"$uv" pip compile requirements/msolve.in --no-deps --universal --python-version 3.11 --generate-hashes \
  --no-header --quiet "${upgrade[@]}" -o requirements/msolve.txt
# Macaulay2's wheel alone (the wheel backend; installed with --no-deps like msolve's)
"$uv" pip compile requirements/macaulay2.in --no-deps --universal --python-version 3.11 --generate-hashes \
  --no-header --quiet "${upgrade[@]}" -o requirements/macaulay2.txt
# the name and size of every file of those two locks (ag_attention/_m2/wheels/files.json, read by `ag-attention m2
# install --dry-run`; ag_attention/_m2/wheels/*.txt are links to the two lock files)
python3 scripts/wheel_files.py
# PyTorch for the torch tests (scripts/setup-torch.sh): its dependencies beside a CPU wheel, and aarch64's CPU
# build from PyPI with its dependencies
"$uv" pip compile requirements/torch-deps.in --universal --python-version 3.10 --generate-hashes --no-header \
  --quiet "${upgrade[@]}" -o requirements/torch-deps.txt
"$uv" pip compile requirements/torch-aarch64.in --python-version 3.11 --python-platform aarch64-manylinux_2_28 \
  --generate-hashes --no-header --quiet "${upgrade[@]}" -o requirements/torch-aarch64.txt
# Hugging Face transformers for the tests that build real checkpoints (requirements/transformers.in says why): the
# lock's versions as constraints, none of them emitted again
noemit=()
for name in click colorama fsspec idna markdown-it-py mdurl numpy packaging pygments pyyaml safetensors tqdm \
  typing-extensions filelock; do noemit+=(--no-emit-package "$name"); done
"$uv" pip compile requirements/transformers.in --universal --python-version 3.11 --generate-hashes --no-header \
  --quiet "${upgrade[@]}" -c requirements/lock.txt -c requirements/torch-deps.txt "${noemit[@]}" \
  -o requirements/transformers.txt
echo "[lock] requirements/lock.txt: $(grep -c '==' requirements/lock.txt) pins; requirements/msolve.txt: $(grep -c '==' requirements/msolve.txt); requirements/macaulay2.txt: $(grep -c '==' requirements/macaulay2.txt)"

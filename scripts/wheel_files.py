"""Write ag_attention/_m2/wheels/files.json: the name and size of every file locked in requirements/macaulay2.txt
and requirements/msolve.txt, so that ``ag-attention m2 install --dry-run`` says offline which wheel it would take
and how large it is.

    python scripts/wheel_files.py     (scripts/lock.sh runs it after refreshing the two lock files)

Reads PyPI's simple index in its JSON form (PEP 691; ``size`` from PEP 700), one request per locked package, and
keeps the files whose sha256 the lock names; a locked hash the index does not list is an error.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCKS = [ROOT / "requirements" / "macaulay2.txt", ROOT / "requirements" / "msolve.txt"]
OUT = ROOT / "ag_attention" / "_m2" / "wheels" / "files.json"
INDEX = "https://pypi.org/simple"


def locked(path: Path) -> tuple[str, set[str]]:
    """The package a lock file pins, and the sha256 of its files."""
    text = path.read_text()
    pin = re.search(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", text, re.M)
    if pin is None:
        raise SystemExit(f"{path}: no pin (name==version)")
    return pin.group(1), set(re.findall(r"--hash=sha256:([0-9a-f]{64})", text))


def index_files(name: str) -> dict[str, dict[str, object]]:
    """sha256 -> {filename, size} of every file the index lists for ``name``."""
    request = urllib.request.Request(f"{INDEX}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        page = json.load(response)
    return {f["hashes"]["sha256"]: {"filename": f["filename"], "size": f["size"]} for f in page["files"]}


def main() -> int:
    files: dict[str, dict[str, object]] = {}
    for path in LOCKS:
        name, hashes = locked(path)
        listed = index_files(name)
        missing = sorted(hashes - set(listed))
        if missing:
            print(f"{path}: {INDEX}/{name}/ lists no file with sha256 {', '.join(missing)}", file=sys.stderr)
            return 1
        files.update({h: listed[h] for h in hashes})
    data = {
        "comment": "written by scripts/wheel_files.py (scripts/lock.sh) from PyPI's simple index: the name and size "
        "of every file locked in macaulay2.txt and msolve.txt, for `ag-attention m2 install --dry-run`",
        "files": dict(sorted(files.items(), key=lambda item: str(item[1]["filename"]))),
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"[lock] {OUT.relative_to(ROOT)}: {len(files)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

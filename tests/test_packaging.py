"""A wheel of ag-attention works outside the checkout: the Macaulay2 package ships inside it.

The wheel is built offline (``pip wheel --no-deps --no-build-isolation``, with
setuptools and wheel from the ``test`` extra) from a copy of the working tree,
installed into a fresh virtual environment (``--no-deps``; the dependencies are
borrowed from this environment through a ``.pth`` file, so nothing is
downloaded), and ``ag-attention m2 doctor --json`` runs from a directory
outside the checkout.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    for module in ("setuptools", "wheel"):
        if importlib.util.find_spec(module) is None:
            pytest.fail(f"{module} is needed to build the wheel offline: pip install -e '.[test]'")
    src = tmp_path_factory.mktemp("src")
    # a copy of the working tree (symlinks kept): the build writes build/ and *.egg-info next to the sources
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("ag_attention", "m2scripts", "requirements"):
        shutil.copytree(ROOT / name, src / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)])
    (whl,) = dist.glob("ag_attention-*.whl")
    return whl


def test_the_wheel_holds_the_macaulay2_package(wheel):
    with zipfile.ZipFile(wheel) as z:
        data = z.read("ag_attention/_m2/LightningAttention.m2")
    assert data == (ROOT / "m2scripts" / "LightningAttention.m2").read_bytes()  # the content, not a link


def test_the_wheel_holds_the_golden_files_and_their_manifest(wheel):
    """reproduce related reads the golden files of their Macaulay2 code as package data: every file of the
    manifest, and the manifest, ship with their bytes."""
    where = ROOT / "ag_attention" / "_reproduce" / "related" / "data" / "aldm"
    manifest = json.loads((where / "MANIFEST.json").read_text())
    assert len(manifest["sha256"]) == 11
    with zipfile.ZipFile(wheel) as z:
        for name in [*manifest["sha256"], "MANIFEST.json"]:
            assert z.read(f"ag_attention/_reproduce/related/data/aldm/{name}") == (where / name).read_bytes(), name


def test_the_wheel_holds_the_grid_files_of_the_reproductions(wheel):
    """The reproductions read their grids from the package (sweeps/ of a checkout is a link to them)."""
    where = ROOT / "ag_attention" / "_reproduce" / "sweeps"
    assert (ROOT / "sweeps").resolve() == where.resolve()
    names = sorted(p.name for p in where.glob("*.toml"))
    assert "certification.toml" in names and "open-heads.toml" in names
    with zipfile.ZipFile(wheel) as z:
        for name in names:
            assert z.read(f"ag_attention/_reproduce/sweeps/{name}") == (where / name).read_bytes(), name


def test_the_wheel_holds_the_lock_files_of_macaulay2s_and_msolves_wheels(wheel):
    """`ag-attention m2 install` reads them from the package: the lock files' bytes (links to requirements/ in the
    checkout) and the table of their files."""
    with zipfile.ZipFile(wheel) as z:
        for name in ("macaulay2.txt", "msolve.txt"):
            assert z.read(f"ag_attention/_m2/wheels/{name}") == (ROOT / "requirements" / name).read_bytes(), name
        table = json.loads(z.read("ag_attention/_m2/wheels/files.json"))
    assert table == json.loads((ROOT / "ag_attention" / "_m2" / "wheels" / "files.json").read_text())


def test_installed_wheel_runs_macaulay2_from_outside_the_checkout(wheel, tmp_path, m2_local):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)])
    # the dependencies (numpy, python-flint) from this environment; its site-packages' own .pth files
    # (the editable install of the checkout) are not processed from there
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("AG_ATTENTION_M2SCRIPTS", "PYTHONPATH", "VIRTUAL_ENV")}
    where = _run(
        [str(py), "-c", "import ag_attention._m2.runner as r; print(r.__file__); print(r.package_file())"],
        cwd=elsewhere,
        env=env,
    ).stdout.split()
    assert all(Path(p).is_relative_to(venv) for p in where), where  # the wheel's copy, not the checkout
    r = subprocess.run(
        [str(venv / "bin" / "ag-attention"), "m2", "doctor", "--json"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = json.loads(r.stdout)
    local = next(b for b in report["backends"] if b["name"] == "local")
    assert local["available"] and local["package_ok"] and local["error"] is None, report
    assert report["ok"] and r.returncode == 0


def test_the_runtime_does_not_import_sympy():
    """sympy is a test dependency (the ``test`` extra), not a runtime one: only an export imports it, inside
    the function, with a clear error where it is missing (``Implicitization.to_sympy``)."""
    users = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "ag_attention").rglob("*.py")
        if re.search(r"^(import sympy|from sympy)", p.read_text(), re.MULTILINE)
    ]
    assert users == []
    lazy = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "ag_attention").rglob("*.py")
        if re.search(r"^\s+(import sympy|from sympy)", p.read_text(), re.MULTILINE)
    ]
    assert lazy == ["ag_attention/_algebra/implicitize.py"]
    text = (ROOT / "pyproject.toml").read_text()
    runtime = text[text.index("dependencies = [") : text.index("]", text.index("dependencies = ["))]
    assert "sympy" not in runtime


def test_the_package_never_imports_torch():
    """Network.from_torch is duck-typed: only the reader of .pt / .bin files imports torch (inside the function,
    torch.load(weights_only=True)), and importing the package (and reading weights) leaves torch unimported even
    where it is installed."""
    users = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "ag_attention").rglob("*.py")
        if re.search(r"^\s*(import torch|from torch)", p.read_text(), re.MULTILINE)
    ]
    assert users == ["ag_attention/_point/files.py"]
    assert not re.search(r"^(import torch|from torch)", (ROOT / users[0]).read_text(), re.MULTILINE)  # deferred
    code = (
        "import sys, ag_attention\n"
        "ag_attention.Network.from_weights({'layers.0.heads.0.A': [[1.5]], 'layers.0.heads.0.V': [[2]]})\n"
        "print('torch' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


def test_package_file_is_the_shipped_copy_unless_overridden(tmp_path, monkeypatch):
    from ag_attention._errors import M2NotFoundError
    from ag_attention._m2.runner import package_file

    monkeypatch.delenv("AG_ATTENTION_M2SCRIPTS", raising=False)
    assert package_file() == ROOT / "ag_attention" / "_m2" / "LightningAttention.m2"
    assert package_file().read_bytes() == (ROOT / "m2scripts" / "LightningAttention.m2").read_bytes()
    shutil.copy(ROOT / "m2scripts" / "LightningAttention.m2", tmp_path / "LightningAttention.m2")
    monkeypatch.setenv("AG_ATTENTION_M2SCRIPTS", str(tmp_path))
    assert package_file() == tmp_path / "LightningAttention.m2"
    monkeypatch.setenv("AG_ATTENTION_M2SCRIPTS", str(tmp_path / "nowhere"))
    with pytest.raises(M2NotFoundError, match="AG_ATTENTION_M2SCRIPTS"):
        package_file()


# ------------------------------------------------------------------------------------------- the lock
def _locked() -> dict[str, tuple[str, str]]:
    """``name -> (version, marker)`` of the pins of ``requirements/lock.txt`` that apply to this Python."""
    from packaging.markers import Marker

    pins = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$", line)
        if m and (m.group(3) is None or Marker(m.group(3)).evaluate()):
            pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = (m.group(2), m.group(3) or "")
    return pins


def _requirements() -> list:
    """The requirements of pyproject.toml: the dependencies and the extras that scripts/setup.sh installs."""
    import tomllib
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    extras = re.findall(r"--extra (\w+)", (ROOT / "scripts" / "lock.sh").read_text())
    assert extras and "requirements/lock.txt" in setup
    texts = project["dependencies"] + [r for e in extras for r in project["optional-dependencies"][e]]
    return [Requirement(t) for t in texts]


def test_the_lock_pins_every_requirement_of_pyproject_within_its_range():
    """A dependency added to pyproject.toml without `scripts/lock.sh` (or a range the pin leaves) fails here."""
    pins = _locked()
    for req in _requirements():
        if req.marker is not None and not req.marker.evaluate():
            continue
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in pins, f"{req} is not in requirements/lock.txt: run scripts/lock.sh"
        assert req.specifier.contains(pins[name][0], prereleases=True), (
            f"requirements/lock.txt pins {name}=={pins[name][0]}, outside {req}: run scripts/lock.sh"
        )


def test_every_pin_carries_hashes_and_the_environment_is_the_locked_one():
    """pip installs with --require-hashes; this venv (made by scripts/setup.sh) holds exactly the locked versions."""
    from importlib.metadata import PackageNotFoundError, version

    text = (ROOT / "requirements" / "lock.txt").read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.strip())
    assert all("--hash=sha256:" in b for b in blocks if "==" in b.splitlines()[0])
    if os.environ.get("AG_ATTENTION_UNLOCKED"):  # a user's own environment (pip install ag-attention)
        pytest.skip("AG_ATTENTION_UNLOCKED is set: this environment is not the locked one")
    wrong = []
    for name, (pinned, _) in _locked().items():
        try:
            got = version(name)
        except PackageNotFoundError:
            wrong.append(f"{name}: not installed (locked {pinned})")
            continue
        if got != pinned:
            wrong.append(f"{name}: {got} installed, {pinned} locked")
    assert not wrong, "the environment is not the lock's (scripts/setup.sh installs it): " + "; ".join(wrong)


def test_the_image_and_the_venv_take_the_same_msolve():
    dockerfile = re.search(r"^ARG MSOLVE_WHEEL=(\S+)", (ROOT / "docker" / "Dockerfile").read_text(), re.M)
    locked = (ROOT / "requirements" / "msolve.txt").read_text()
    assert dockerfile and re.search(rf"^{re.escape(dockerfile.group(1))} ", locked, re.M)
    assert "--hash=sha256:" in locked


def _citation():
    """CITATION.cff as a dict (PyYAML where installed, which the locked environment is; else the top-level keys)."""
    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    try:
        import yaml
    except ImportError:  # a user's environment without PyYAML: the top-level keys and their scalar values
        return {m.group(1): m.group(2).strip().strip('"') or None for m in re.finditer(r"^([a-z-]+):(.*)$", text, re.M)}
    return yaml.safe_load(text)


def test_the_citation_file_is_valid_cff_with_the_package_version_license_and_the_paper():
    """CITATION.cff (CFF 1.2.0): the required keys, the version and license of pyproject.toml, and the paper."""
    cff = _citation()
    pyproject = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    license_ = re.search(r'^license = "([^"]+)"', pyproject, re.M).group(1)
    assert {"cff-version", "message", "title", "authors"} <= set(cff)  # the schema's required keys
    assert str(cff["cff-version"]) == "1.2.0" and cff["message"] and cff["title"]
    assert str(cff["version"]) == version and cff["license"] == license_ == "MIT"
    if isinstance(cff["authors"], list):  # parsed as YAML: the nested entries too
        assert all(a.get("name") or a.get("family-names") for a in cff["authors"])
        (paper,) = [r for r in cff["references"] if "Lightning Self-Attention" in r["title"]]
        assert paper["title"] == "Geometry of Lightning Self-Attention: Identifiability and Dimension"
        assert [(a["given-names"], a["family-names"]) for a in paper["authors"]] == [
            ("Nathan W.", "Henry"),
            ("Giovanni Luca", "Marchetti"),
            ("Kathlén", "Kohn"),
        ]
        assert paper["year"] == 2025 and "ICLR" in paper["conference"]["name"]
        assert "2408.17221" in paper["url"] and any(
            i["value"] == "10.48550/arXiv.2408.17221" for i in paper["identifiers"]
        )


def test_the_license_file_is_the_one_pyproject_names():
    text = (ROOT / "LICENSE").read_text()
    assert re.search(r'^license = "MIT"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert text.startswith("MIT License\n") and "Copyright (c) 2024-2026 the ag-attention authors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text

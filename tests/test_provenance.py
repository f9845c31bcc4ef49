"""Where a result came from (ag_attention._provenance): version, commit, date, Python, flint, and the engines used."""

import datetime as dt
import importlib.metadata
import platform
import re
import subprocess
from pathlib import Path

import ag_attention
from ag_attention._provenance import provenance


def test_the_fields_without_engines():
    p = provenance()
    assert sorted(p) == ["commit", "date", "flint", "python", "version"]
    assert p["version"] == ag_attention.__version__
    assert p["python"] == platform.python_version()
    assert p["flint"] == importlib.metadata.version("python-flint")


def test_only_the_engines_used_are_listed():
    p = provenance(macaulay2="1.21", msolve=None)
    assert p["macaulay2"] == "1.21" and "msolve" not in p
    both = provenance(macaulay2="1.21", msolve="0.7.5")
    assert {k: both[k] for k in ("macaulay2", "msolve")} == {"macaulay2": "1.21", "msolve": "0.7.5"}


def test_the_date_is_utc_to_the_second():
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    date = provenance()["date"]
    after = dt.datetime.now(dt.timezone.utc)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", date), date
    assert before <= dt.datetime.fromisoformat(date) <= after


def test_the_commit_is_the_checkouts_head_or_none():
    root = Path(ag_attention.__file__).resolve().parent.parent
    commit = provenance()["commit"]
    if not (root / ".git").exists():  # a wheel, or a copy of the tree: nothing to name
        assert commit is None
        return
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", commit), commit
    # read once per process (cached): HEAD or, if someone committed since, one of its ancestors
    sha = commit.removesuffix("+dirty")
    ancestor = subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", sha, "HEAD"])
    assert ancestor.returncode == 0, f"{sha} is not a commit of this checkout's history"

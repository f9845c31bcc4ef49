"""``ag-attention m2 doctor`` (ag_attention._m2.doctor): a broken Macaulay2 told from a missing one."""


def test_doctor_tells_a_broken_macaulay2_from_a_missing_one(tmp_path, monkeypatch):
    from ag_attention._m2 import wheel
    from ag_attention._m2.doctor import doctor

    monkeypatch.setattr(wheel, "wheel_binary", lambda program: None)  # no wheel either

    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "M2").write_text("#!/bin/sh\necho 'M2: something is wrong' >&2\nexit 1\n")
    (bindir / "M2").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    monkeypatch.setenv("CONTAINER_ENGINE", "/bin/false")
    report = doctor(timeout=30)
    local, in_wheel, container = report.backends
    assert not in_wheel.available and "passagemath-macaulay2" in in_wheel.detail
    assert local.available and not local.package_ok and "exit status 1, stderr: M2: something is wrong" in local.error
    assert not container.available and "does not run" in container.detail
    assert not report.ok and "apt-get" not in str(report) and "see the error" in report.to_dict()["help"]

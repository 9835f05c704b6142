"""The package builds into a wheel carrying py.typed and the repository's VERSION."""

import importlib.util
import os
import shutil
import zipfile
from pathlib import Path

import pytest

import atrium

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_carries_the_marker_and_the_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in ("setuptools", "wheel"):
        if importlib.util.find_spec(module) is None:
            if os.environ.get("CI") == "true":
                pytest.fail(f"{module} is required in CI (apt-get install python3-{module})")
            pytest.skip(f"{module} is not installed")
    from setuptools import build_meta

    version = (ROOT.parents[1] / "VERSION").read_text().strip()
    assert atrium.__version__ == version
    # setuptools writes its build tree beside the sources: build from a copy, not the checkout.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
    monkeypatch.chdir(source)
    name = build_meta.build_wheel(str(tmp_path))
    assert name == f"atrium_sdk-{version}-py3-none-any.whl"
    files = zipfile.ZipFile(tmp_path / name).namelist()
    assert "atrium/py.typed" in files
    assert "atrium/strategies/sigv4.py" in files
    assert not any(f.startswith("tests/") for f in files)

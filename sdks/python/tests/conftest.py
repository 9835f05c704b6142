"""Starts the real Atrium services (test/sdk-services.ts) once per session for the e2e tests.

Without node or the repository's node_modules the e2e tests skip, except under CI=true where that
is a failure (the rule of the TypeScript real-server suites)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Dict, Iterator

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
CONFORMANCE = REPO / "sdks" / "conformance"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"real services required in CI: {reason}")
    pytest.skip(reason)


class Services:
    def __init__(self, urls: Dict[str, Any]) -> None:
        self.urls = urls
        self.control = httpx.Client(base_url=urls["control"], timeout=60.0)

    def __getitem__(self, name: str) -> Any:
        return self.urls[name]

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = self.control.request(method, path, json=body)
        response.raise_for_status()
        return response.json()

    def authorize(self, authorization_url: str) -> str:
        """Plays the user's browser through consent; the new connection's id."""
        landed = self.call("POST", "/authorize", {"authorization_url": authorization_url})
        assert landed["status"] == "active", landed
        return landed["connection_id"]


@pytest.fixture(scope="session")
def services() -> Iterator[Services]:
    node = os.environ.get("ATRIUM_NODE") or shutil.which("node")
    if node is None:
        _unavailable("node is not on PATH")
    if not (REPO / "node_modules" / "tsx").is_dir():
        _unavailable("node_modules is missing: run `make install` at the repository root")
    log = tempfile.TemporaryFile(mode="w+")
    child = subprocess.Popen(
        [node, "--conditions=atrium-source", "--import", "tsx", "test/sdk-services.ts"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    first_line: Dict[str, str] = {}
    reader = threading.Thread(target=lambda: first_line.update(line=child.stdout.readline()))
    reader.start()
    reader.join(timeout=120)
    line = first_line.get("line", "")
    if not line.startswith("{"):
        child.kill()
        log.seek(0)
        raise RuntimeError(f"test/sdk-services.ts did not start:\n{log.read()[-4000:]}")
    running = Services(json.loads(line))
    try:
        yield running
    finally:
        running.control.close()
        child.stdin.close()  # the fixture stops its services when stdin closes
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
        log.close()


@pytest.fixture(scope="session")
def injection_cases() -> list:
    return json.loads((CONFORMANCE / "injection.json").read_text())["cases"]

"""The cross-language vectors of sdks/conformance/injection.json (the TS and Go SDKs run them too)."""

import json
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from atrium import inject_credential

CASES = json.loads(
    (Path(__file__).resolve().parents[2] / "conformance" / "injection.json").read_text()
)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_injects_what_the_other_sdks_inject(case: dict) -> None:
    source = case["request"]
    request = httpx.Request(
        source["method"],
        source["url"],
        headers=source["headers"],
        content=None if source["body"] is None else source["body"].encode(),
    )
    signing_date = case.get("signing_date")
    inject = lambda: inject_credential(  # noqa: E731
        request,
        case["token"],
        signing_date=datetime.fromisoformat(signing_date.replace("Z", "+00:00")) if signing_date else None,
    )
    if case["expect"].get("error"):
        with pytest.raises(ValueError):
            inject()
        return
    out = inject()
    headers = {k.lower(): v for k, v in out.headers.items() if k.lower() not in ("host", "content-length")}
    assert {"url": str(out.url), "headers": headers} == case["expect"]
    assert out.content == request.content

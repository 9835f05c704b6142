"""What the sync and async clients share: URLs, headers, and reading answers into errors."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Union
from urllib.parse import quote

import httpx

from ._version import USER_AGENT
from .errors import AtriumError

QueryValue = Union[str, int, float, bool, None]
ErrorFactory = Callable[[int, Any], Exception]


def segment(value: str) -> str:
    """One path segment, percent-encoded like encodeURIComponent."""
    return quote(value, safe="")


def base_url(url: str) -> str:
    # A trailing slash keeps a base path (http://host/api/v1/) when paths are joined to it.
    return url if url.endswith("/") else url + "/"


def query(params: Mapping[str, QueryValue]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for name, value in params.items():
        if value is None or value == "":
            continue
        out[name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out


def default_headers(extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    return {"user-agent": USER_AGENT, "accept": "application/json", **(extra or {})}


def read_body(response: httpx.Response) -> Any:
    text = response.text
    if text == "":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def check(response: httpx.Response, error_for: ErrorFactory = AtriumError) -> Any:
    """The parsed body of a 2xx answer; otherwise raises ``error_for(status, body)``."""
    body = read_body(response)
    if not response.is_success:
        raise error_for(response.status_code, body)
    return body


@dataclass(frozen=True)
class Call:
    """One API request as data, so the sync and async clients send identical requests."""

    method: str
    path: str
    params: Dict[str, QueryValue] = field(default_factory=dict)
    body: Any = None
    # The list endpoints wrap their items in an object.
    unwrap: Optional[str] = None
    error_for: ErrorFactory = AtriumError
    # Per-call headers on top of the client's (an Idempotency-Key, say).
    headers: Dict[str, str] = field(default_factory=dict)

    def query(self) -> Dict[str, str]:
        return query(self.params)

    def result(self, response: httpx.Response) -> Any:
        body = check(response, self.error_for)
        if self.unwrap is None:
            return body
        return (body or {}).get(self.unwrap) or []

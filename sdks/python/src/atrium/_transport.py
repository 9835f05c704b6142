"""An httpx client bound to one service's base URL and headers, sync or async."""

from __future__ import annotations

from typing import Any, Mapping, Optional

import httpx

from ._http import Call, base_url, default_headers


class SyncTransport:
    def __init__(
        self, url: str, headers: Mapping[str, str], http: Optional[httpx.Client], timeout: float
    ) -> None:
        self.base = base_url(url)
        self.headers = default_headers(headers)
        self.http = http or httpx.Client(timeout=timeout)
        self._owns_http = http is None

    def send(self, call: Call) -> Any:
        response = self.http.request(
            call.method, self.base + call.path, params=call.query(), json=call.body, headers={**self.headers, **call.headers}
        )
        return call.result(response)

    def close(self) -> None:
        if self._owns_http:
            self.http.close()


class AsyncTransport:
    def __init__(
        self, url: str, headers: Mapping[str, str], http: Optional[httpx.AsyncClient], timeout: float
    ) -> None:
        self.base = base_url(url)
        self.headers = default_headers(headers)
        self.http = http or httpx.AsyncClient(timeout=timeout)
        self._owns_http = http is None

    async def send(self, call: Call) -> Any:
        response = await self.http.request(
            call.method, self.base + call.path, params=call.query(), json=call.body, headers={**self.headers, **call.headers}
        )
        return call.result(response)

    async def aclose(self) -> None:
        if self._owns_http:
            await self.http.aclose()

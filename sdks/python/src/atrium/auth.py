"""httpx authentication that injects a connection's credential into every request."""

from __future__ import annotations

from typing import AsyncGenerator, Generator, Generic, Optional, Protocol, TypeVar

import httpx

from ._version import USER_AGENT
from .strategies.inject import inject_credential, resolve_strategy
from .types import ConnectionToken, CredentialStrategy


class TokenSource(Protocol):
    """What ConnectionAuth asks of a gateway client (``GatewayClient`` is one)."""

    def get_token(
        self, connection_id: str, *, workspace_id: Optional[str] = None, bypass_cache: bool = False
    ) -> ConnectionToken: ...

    def refresh_connection(
        self, connection_id: str, *, workspace_id: Optional[str] = None
    ) -> object: ...


class AsyncTokenSource(Protocol):
    """What AsyncConnectionAuth asks of a gateway client (``AsyncGatewayClient`` is one)."""

    async def get_token(
        self, connection_id: str, *, workspace_id: Optional[str] = None, bypass_cache: bool = False
    ) -> ConnectionToken: ...

    async def refresh_connection(
        self, connection_id: str, *, workspace_id: Optional[str] = None
    ) -> object: ...


Source = TypeVar("Source", TokenSource, AsyncTokenSource)


class _Base(httpx.Auth, Generic[Source]):
    # Signing strategies need the body bytes, and a retry must resend them.
    requires_request_body = True

    def __init__(
        self,
        gateway: Source,
        connection_id: str,
        *,
        workspace_id: Optional[str] = None,
        strategy: Optional[CredentialStrategy] = None,
        refresh_on_unauthorized: bool = True,
    ) -> None:
        self._gateway = gateway
        self.connection_id = connection_id
        self.workspace_id = workspace_id
        self.strategy = strategy
        self.refresh_on_unauthorized = refresh_on_unauthorized

    def _prepare(self, request: httpx.Request, token: ConnectionToken) -> httpx.Request:
        # The caller's own User-Agent wins; otherwise the resource sees who is calling.
        if request.headers.get("user-agent", "").startswith("python-httpx/"):
            request.headers["user-agent"] = USER_AGENT
        return inject_credential(request, token, self.strategy)

    def _retry(self, response: httpx.Response, token: ConnectionToken) -> bool:
        """On a 401, an oauth2 connection is refreshed through the gateway and sent once more."""
        return (
            response.status_code == 401
            and self.refresh_on_unauthorized
            and resolve_strategy(token, self.strategy).get("type") == "oauth2"
        )


class ConnectionAuth(_Base[TokenSource]):
    """For ``httpx.Client``; made by ``GatewayClient.auth(connection_id)``."""

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._gateway.get_token(self.connection_id, workspace_id=self.workspace_id)
        response = yield self._prepare(request, token)
        if not self._retry(response, token):
            return
        response.read()
        self._gateway.refresh_connection(self.connection_id, workspace_id=self.workspace_id)
        token = self._gateway.get_token(
            self.connection_id, workspace_id=self.workspace_id, bypass_cache=True
        )
        yield self._prepare(request, token)


class AsyncConnectionAuth(_Base[AsyncTokenSource]):
    """For ``httpx.AsyncClient``; made by ``AsyncGatewayClient.auth(connection_id)``."""

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await self._gateway.get_token(self.connection_id, workspace_id=self.workspace_id)
        response = yield self._prepare(request, token)
        if not self._retry(response, token):
            return
        await response.aread()
        await self._gateway.refresh_connection(self.connection_id, workspace_id=self.workspace_id)
        token = await self._gateway.get_token(
            self.connection_id, workspace_id=self.workspace_id, bypass_cache=True
        )
        yield self._prepare(request, token)

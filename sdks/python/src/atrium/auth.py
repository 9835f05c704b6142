"""httpx authentication that injects a connection's credential into every request."""

from __future__ import annotations

from typing import TYPE_CHECKING, AsyncGenerator, Generator, Optional

import httpx

from ._version import USER_AGENT
from .strategies.inject import inject_credential, resolve_strategy
from .types import ConnectionToken, CredentialStrategy

if TYPE_CHECKING:
    from .gateway import GatewayClient
    from .gateway_async import AsyncGatewayClient


class _Base(httpx.Auth):
    # Signing strategies need the body bytes, and a retry must resend them.
    requires_request_body = True

    def __init__(
        self,
        connection_id: str,
        *,
        workspace_id: Optional[str],
        strategy: Optional[CredentialStrategy],
        refresh_on_unauthorized: bool,
    ) -> None:
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


class ConnectionAuth(_Base):
    """For ``httpx.Client``; made by ``GatewayClient.auth(connection_id)``."""

    def __init__(self, gateway: "GatewayClient", connection_id: str, **options: object) -> None:
        super().__init__(connection_id, **options)  # type: ignore[arg-type]
        self._gateway = gateway

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
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


class AsyncConnectionAuth(_Base):
    """For ``httpx.AsyncClient``; made by ``AsyncGatewayClient.auth(connection_id)``."""

    def __init__(self, gateway: "AsyncGatewayClient", connection_id: str, **options: object) -> None:
        super().__init__(connection_id, **options)  # type: ignore[arg-type]
        self._gateway = gateway

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

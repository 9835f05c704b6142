# Generated from gateway_async.py by sdks/python/scripts/unasync.py: edit that file and run
# the script; tests/test_unasync.py fails while this one is out of date.
"""The gateway client (sync): connection tokens, refresh, revocation, connections, agents
and webhook subscriptions."""

from __future__ import annotations

from typing import Dict, List, Optional

import httpx

from . import _gateway_calls as calls
from ._key_locks import KeyLocks
from ._transport import SyncTransport
from .auth import ConnectionAuth
from .token_cache import TokenCache
from .types import (
    Agent,
    AgentSession,
    CaptureSchema,
    Connection,
    ConnectionToken,
    CredentialStrategy,
    DeleteWebhookResult,
    RefreshResult,
    RevocationResult,
    StartConnectionResult,
    Webhook,
    WebhookDelivery,
)


class GatewayClient:
    """``GatewayClient("http://127.0.0.1:8082", api_key=...)``; pass ``http`` to reuse your
    own ``httpx.Client`` (its base URL is left alone; paths are joined to ``url``)."""

    def __init__(
        self,
        url: str,
        *,
        api_key: Optional[str] = None,
        token_cache: Optional[TokenCache] = None,
        http: Optional[httpx.Client] = None,
        timeout: float = 30.0,
    ) -> None:
        self._t = SyncTransport(url, {"x-api-key": api_key} if api_key else {}, http, timeout)
        self._cache = token_cache or TokenCache()
        self._lock = KeyLocks()

    def __enter__(self) -> "GatewayClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._t.close()

    def get_token(
        self, connection_id: str, *, workspace_id: Optional[str] = None, bypass_cache: bool = False
    ) -> ConnectionToken:
        """The connection's credential, cached until shortly before it expires. Concurrent callers
        share one request per connection; ``bypass_cache`` asks the gateway (which refreshes an
        expired token itself)."""
        key = calls.cache_key(connection_id, workspace_id)
        with self._lock(key):
            cached = None if bypass_cache else self._cache.get(key)
            if cached is not None:
                return cached
            try:
                token: ConnectionToken = self._t.send(
                    calls.get_token(connection_id, workspace_id)
                )
            except BaseException:
                self._cache.delete(key)
                raise
            self._cache.set(key, token)
            return token

    def refresh_connection(
        self, connection_id: str, *, workspace_id: Optional[str] = None
    ) -> RefreshResult:
        self._cache.delete(calls.cache_key(connection_id, workspace_id))
        return self._t.send(calls.refresh_connection(connection_id, workspace_id))

    def revoke_connection(
        self,
        connection_id: str,
        *,
        workspace_id: Optional[str] = None,
        reason: Optional[str] = None,
    ) -> RevocationResult:
        result = self._t.send(calls.revoke_connection(connection_id, workspace_id, reason))
        self._cache.delete(calls.cache_key(connection_id, workspace_id))
        return result

    def get_connection(
        self, connection_id: str, *, workspace_id: Optional[str] = None
    ) -> Connection:
        return self._t.send(calls.get_connection(connection_id, workspace_id))

    def list_connections(self, *, workspace_id: Optional[str] = None) -> List[Connection]:
        return self._t.send(calls.list_connections(workspace_id))

    def start_connection(
        self,
        provider_id: str,
        workspace_id: str,
        *,
        return_url: Optional[str] = None,
        scopes: Optional[List[str]] = None,
    ) -> StartConnectionResult:
        """Starts an OAuth flow; send the user's browser to ``authorization_url``."""
        return self._t.send(
            calls.start_connection(provider_id, workspace_id, return_url, scopes)
        )

    def get_capture_schema(self, provider_id: str) -> CaptureSchema:
        return self._t.send(calls.get_capture_schema(provider_id))

    def capture_credential(
        self,
        provider_id: str,
        workspace_id: str,
        *,
        api_key: Optional[str] = None,
        username: Optional[str] = None,
        password: Optional[str] = None,
    ) -> Connection:
        """Captures a static credential (api_key, basic_auth); the broker validates it first."""
        return self._t.send(
            calls.capture_credential(provider_id, workspace_id, api_key, username, password)
        )

    def create_agent(
        self,
        workspace_id: str,
        name: str,
        *,
        description: Optional[str] = None,
        metadata: Optional[Dict[str, str]] = None,
    ) -> Agent:
        return self._t.send(calls.create_agent(workspace_id, name, description, metadata))

    def list_agents(self, workspace_id: str) -> List[Agent]:
        """The workspace's agents, disabled ones included, oldest first."""
        return self._t.send(calls.list_agents(workspace_id))

    def get_agent(self, agent_id: str, *, workspace_id: Optional[str] = None) -> Agent:
        return self._t.send(calls.get_agent(agent_id, workspace_id))

    def disable_agent(self, agent_id: str, *, workspace_id: Optional[str] = None) -> Agent:
        """Disables the agent and closes its open sessions; a repeat returns it unchanged."""
        return self._t.send(calls.disable_agent(agent_id, workspace_id))

    def create_agent_session(
        self, agent_id: str, connection_id: str, workspace_id: str
    ) -> AgentSession:
        """404 for an unknown agent, 412 for a disabled one."""
        return self._t.send(calls.create_agent_session(agent_id, connection_id, workspace_id))

    def get_agent_session(self, session_id: str) -> AgentSession:
        return self._t.send(calls.get_agent_session(session_id))

    def create_webhook(
        self,
        name: str,
        url: str,
        event_types: List[str],
        *,
        secret: Optional[str] = None,
        enabled: Optional[bool] = None,
        description: Optional[str] = None,
    ) -> Webhook:
        """Subscribes ``url`` to ``event_types``. Without ``secret`` one is generated and returned
        in this answer only. Webhooks hear every connection event, so a gateway without inbound
        keys answers these calls with 412."""
        return self._t.send(
            calls.create_webhook(name, url, event_types, secret, enabled, description)
        )

    def list_webhooks(self) -> List[Webhook]:
        return self._t.send(calls.list_webhooks())

    def get_webhook(self, webhook_id: str) -> Webhook:
        return self._t.send(calls.get_webhook(webhook_id))

    def update_webhook(
        self,
        webhook_id: str,
        *,
        name: Optional[str] = None,
        url: Optional[str] = None,
        event_types: Optional[List[str]] = None,
        secret: Optional[str] = None,
        enabled: Optional[bool] = None,
        description: Optional[str] = None,
    ) -> Webhook:
        """Changes the fields given; a new ``secret`` replaces the current one without overlap."""
        return self._t.send(
            calls.update_webhook(webhook_id, name, url, event_types, secret, enabled, description)
        )

    def delete_webhook(self, webhook_id: str) -> DeleteWebhookResult:
        """Deletes the subscription with its deliveries."""
        return self._t.send(calls.delete_webhook(webhook_id))

    def list_webhook_deliveries(
        self,
        webhook_id: str,
        *,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        offset: Optional[int] = None,
    ) -> List[WebhookDelivery]:
        """Newest first, each with every attempt; ``status`` is pending, delivered or failed."""
        return self._t.send(calls.list_webhook_deliveries(webhook_id, status, limit, offset))

    def rotate_webhook_secret(
        self, webhook_id: str, *, overlap_seconds: Optional[int] = None
    ) -> Webhook:
        """A new secret, in this answer only; the previous one stays valid for ``overlap_seconds``
        (default and maximum 86400, 0 revokes it at once)."""
        return self._t.send(calls.rotate_webhook_secret(webhook_id, overlap_seconds))

    def redeliver_webhook(self, webhook_id: str, delivery_id: str) -> WebhookDelivery:
        """A failed delivery pending again with the same ``webhook-id``; 412 when delivered or
        pending."""
        return self._t.send(calls.redeliver_webhook(webhook_id, delivery_id))

    def auth(
        self,
        connection_id: str,
        *,
        workspace_id: Optional[str] = None,
        strategy: Optional[CredentialStrategy] = None,
        refresh_on_unauthorized: bool = True,
    ) -> ConnectionAuth:
        """An ``httpx.Auth`` for ``httpx.Client`` injecting this connection's credential."""
        return ConnectionAuth(
            self,
            connection_id,
            workspace_id=workspace_id,
            strategy=strategy,
            refresh_on_unauthorized=refresh_on_unauthorized,
        )

"""The gateway's /v1 routes as data, so the sync and async clients send identical requests."""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, List, Optional

from ._http import Call, QueryValue, segment
from .errors import gateway_error_for


def _call(
    method: str,
    path: str,
    params: Optional[Dict[str, QueryValue]] = None,
    body: Any = None,
    *,
    connection_id: Optional[str] = None,
    unwrap: Optional[str] = None,
) -> Call:
    """A gateway call; with ``connection_id``, 409/410/400 become that connection's typed errors."""
    return Call(method, path, params or {}, body, unwrap,
                 partial(gateway_error_for, connection_id=connection_id))


def cache_key(connection_id: str, workspace_id: Optional[str]) -> str:
    return f"{workspace_id or ''}\0{connection_id}"


def _drop_none(values: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def get_token(connection_id: str, workspace_id: Optional[str]) -> Call:
    return _call("GET", f"v1/token/{segment(connection_id)}", {"workspace_id": workspace_id},
                 connection_id=connection_id)


def refresh_connection(connection_id: str, workspace_id: Optional[str]) -> Call:
    return _call("POST", f"v1/refresh/{segment(connection_id)}",
                 body=_drop_none({"workspace_id": workspace_id}), connection_id=connection_id)


def revoke_connection(connection_id: str, workspace_id: Optional[str], reason: Optional[str]) -> Call:
    return _call("DELETE", f"v1/connections/{segment(connection_id)}",
                 {"workspace_id": workspace_id, "reason": reason}, connection_id=connection_id)


def get_connection(connection_id: str, workspace_id: Optional[str]) -> Call:
    return _call("GET", f"v1/connections/{segment(connection_id)}", {"workspace_id": workspace_id},
                 connection_id=connection_id)


def list_connections(workspace_id: Optional[str]) -> Call:
    return _call("GET", "v1/connections", {"workspace_id": workspace_id}, unwrap="connections")


def start_connection(provider_id: str, workspace_id: str, return_url: Optional[str],
                     scopes: Optional[List[str]]) -> Call:
    return _call("POST", "v1/connect", body=_drop_none({
        "provider_id": provider_id, "workspace_id": workspace_id, "return_url": return_url,
        "scopes": scopes}))


def get_capture_schema(provider_id: str) -> Call:
    return _call("GET", "v1/capture-schema", {"provider_id": provider_id})


def capture_credential(provider_id: str, workspace_id: str, api_key: Optional[str],
                       username: Optional[str], password: Optional[str]) -> Call:
    return _call("POST", "v1/capture-credential", body=_drop_none({
        "provider_id": provider_id, "workspace_id": workspace_id, "api_key": api_key,
        "username": username, "password": password}))


def create_agent(workspace_id: str, name: str, description: Optional[str],
                 metadata: Optional[Dict[str, str]]) -> Call:
    return _call("POST", "v1/agents", body=_drop_none({
        "workspace_id": workspace_id, "name": name, "description": description,
        "metadata": metadata}))


def list_agents(workspace_id: str) -> Call:
    return _call("GET", "v1/agents", {"workspace_id": workspace_id}, unwrap="agents")


def get_agent(agent_id: str, workspace_id: Optional[str]) -> Call:
    return _call("GET", f"v1/agents/{segment(agent_id)}", {"workspace_id": workspace_id})


def disable_agent(agent_id: str, workspace_id: Optional[str]) -> Call:
    return _call("DELETE", f"v1/agents/{segment(agent_id)}", {"workspace_id": workspace_id})


def create_agent_session(agent_id: str, connection_id: str, workspace_id: str) -> Call:
    return _call("POST", "v1/agent-sessions", body={
        "agent_id": agent_id, "connection_id": connection_id, "workspace_id": workspace_id})


def get_agent_session(session_id: str) -> Call:
    return _call("GET", f"v1/agent-sessions/{segment(session_id)}")


def _webhook(webhook_id: str) -> str:
    return f"v1/webhooks/{segment(webhook_id)}"


def _webhook_fields(name: Optional[str], url: Optional[str], event_types: Optional[List[str]],
                    secret: Optional[str], enabled: Optional[bool],
                    description: Optional[str]) -> Dict[str, Any]:
    return _drop_none({"name": name, "url": url, "event_types": event_types, "secret": secret,
                       "enabled": enabled, "description": description})


def create_webhook(name: str, url: str, event_types: List[str], secret: Optional[str],
                   enabled: Optional[bool], description: Optional[str]) -> Call:
    return _call("POST", "v1/webhooks",
                 body=_webhook_fields(name, url, event_types, secret, enabled, description))


def list_webhooks() -> Call:
    return _call("GET", "v1/webhooks", unwrap="webhooks")


def get_webhook(webhook_id: str) -> Call:
    return _call("GET", _webhook(webhook_id))


def update_webhook(webhook_id: str, name: Optional[str], url: Optional[str],
                   event_types: Optional[List[str]], secret: Optional[str],
                   enabled: Optional[bool], description: Optional[str]) -> Call:
    return _call("PATCH", _webhook(webhook_id),
                 body=_webhook_fields(name, url, event_types, secret, enabled, description))


def delete_webhook(webhook_id: str) -> Call:
    return _call("DELETE", _webhook(webhook_id))


def list_webhook_deliveries(webhook_id: str, status: Optional[str], limit: Optional[int],
                            offset: Optional[int]) -> Call:
    return _call("GET", f"{_webhook(webhook_id)}/deliveries",
                 {"status": status, "limit": limit, "offset": offset}, unwrap="deliveries")


def rotate_webhook_secret(webhook_id: str, overlap_seconds: Optional[int]) -> Call:
    return _call("POST", f"{_webhook(webhook_id)}/rotate-secret",
                 body=_drop_none({"overlap_seconds": overlap_seconds}))


def redeliver_webhook(webhook_id: str, delivery_id: str) -> Call:
    return _call("POST", f"{_webhook(webhook_id)}/deliveries/{segment(delivery_id)}/redeliver",
                 body={})

"""Typed errors: every non-2xx answer is an AtriumError carrying its status and body."""

from __future__ import annotations

from typing import Any, Optional


class AtriumError(Exception):
    """Any non-2xx answer from an Atrium service; ``body`` is the parsed JSON (or the raw text)."""

    def __init__(self, status: int, body: Any, message: Optional[str] = None) -> None:
        super().__init__(message or f"HTTP {status}: {_describe(body)}")
        self.status = status
        self.body = body
        self.code = error_code_of(body)


class GatewayError(AtriumError):
    """A non-2xx answer from the gateway that is none of the typed connection cases."""


class _ConnectionError(GatewayError):
    def __init__(self, connection_id: str, status: int, body: Any, message: str) -> None:
        super().__init__(status, body, message)
        self.connection_id = connection_id


class AttentionRequired(_ConnectionError):
    """409 ``attention_required``: the provider refused a refresh; a human must redo the consent."""

    def __init__(self, connection_id: str, status: int, body: Any) -> None:
        super().__init__(
            connection_id, status, body, f"connection {connection_id} needs a human to redo the consent"
        )


class ConnectionRevoked(_ConnectionError):
    """410 ``connection_revoked``: terminal; start a new connection flow."""

    def __init__(self, connection_id: str, status: int, body: Any) -> None:
        super().__init__(
            connection_id,
            status,
            body,
            f"connection {connection_id} was revoked; start a new connection flow",
        )


class ConnectionNotActive(_ConnectionError):
    """400 ``connection_not_active``: neither active nor revoked (e.g. failed)."""

    def __init__(self, connection_id: str, status: int, body: Any) -> None:
        super().__init__(
            connection_id, status, body, f"connection {connection_id} is not active: {_describe(body)}"
        )


class CredentialError(ValueError):
    """The connection has no credential the chosen strategy can inject."""


def gateway_error_for(status: int, body: Any, connection_id: Optional[str]) -> GatewayError:
    """The typed gateway error for an answer about one connection."""
    code = error_code_of(body)
    if connection_id is not None:
        if status == 409 and code == "attention_required":
            return AttentionRequired(connection_id, status, body)
        if status == 410 and code == "connection_revoked":
            return ConnectionRevoked(connection_id, status, body)
        if status == 400 and code == "connection_not_active":
            return ConnectionNotActive(connection_id, status, body)
    return GatewayError(status, body)


def error_code_of(body: Any) -> Optional[str]:
    if not isinstance(body, dict):
        return None
    for field in ("error", "code"):
        if isinstance(body.get(field), str):
            return body[field]
    return None


def _describe(body: Any) -> str:
    if isinstance(body, str):
        return body[:200]
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return str(body)[:200]

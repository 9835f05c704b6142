"""Puts a connection's credential into an outgoing request, per credential strategy."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime
from typing import Dict, Mapping, Optional

import httpx

from ..errors import CredentialError
from ..types import ConnectionToken, CredentialStrategy
from .hmac_payload import DEFAULT_SIGNATURE_HEADER, sign_payload
from .sigv4 import AwsCredentials, sign_sigv4

DEFAULT_API_KEY_HEADER = "X-API-Key"
DEFAULT_QUERY_PARAM = "api_key"

_NATURAL = {"api_key": "api_key", "basic_auth": "basic_auth", "oauth2": "oauth2"}


@dataclass
class OutgoingRequest:
    """A request before it leaves: what every strategy reads and writes."""

    method: str
    url: str
    headers: Dict[str, str]
    body: bytes = b""


def resolve_strategy(
    token: ConnectionToken, override: Optional[CredentialStrategy] = None
) -> CredentialStrategy:
    """An explicit strategy, else the gateway's, else the natural one for the auth type."""
    if override:
        return override
    strategy = token.get("strategy")
    if strategy and strategy.get("type"):
        return strategy
    natural = _NATURAL.get(token.get("auth_type", ""))
    if natural is None:
        raise CredentialError(
            f"connection {token.get('connection_id')} ({token.get('auth_type')}) "
            "has no credential to inject"
        )
    return {"type": natural}  # type: ignore[typeddict-item]


def apply_credential(
    request: OutgoingRequest,
    token: ConnectionToken,
    strategy: CredentialStrategy,
    *,
    signing_date: Optional[datetime] = None,
) -> OutgoingRequest:
    """The request with the credential in it (header names lowercase); ``request`` is unchanged.
    For the static strategies the secret is the captured api_key; aws_sigv4 takes the access key id
    as username and the secret key as password."""
    headers = {name.lower(): value for name, value in request.headers.items()}
    kind = strategy.get("type")
    if kind == "oauth2":
        headers["authorization"] = f"{_scheme(token.get('token_type', ''))} {_field(token, 'access_token')}"
    elif kind == "api_key":
        name = (strategy.get("header_name") or DEFAULT_API_KEY_HEADER).lower()
        headers[name] = strategy.get("header_prefix", "") + _field(token, "api_key")
    elif kind == "basic_auth":
        pair = f"{_field(token, 'username')}:{token.get('password', '')}".encode()
        headers["authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    elif kind == "query_param":
        url = httpx.URL(request.url).copy_set_param(
            strategy.get("param_name") or DEFAULT_QUERY_PARAM, _field(token, "api_key")
        )
        return OutgoingRequest(request.method, str(url), headers, request.body)
    elif kind == "hmac_payload":
        name = (strategy.get("header_name") or DEFAULT_SIGNATURE_HEADER).lower()
        headers[name] = sign_payload(
            request.body, _field(token, "api_key"), strategy.get("header_prefix", "")
        )
    elif kind == "aws_sigv4":
        region, service = strategy.get("region"), strategy.get("service")
        if not region or not service:
            raise CredentialError("aws_sigv4 needs the strategy's region and service")
        headers = sign_sigv4(
            request.method,
            request.url,
            headers,
            request.body,
            region=region,
            service=service,
            credentials=AwsCredentials(_field(token, "username"), _field(token, "password")),
            signing_date=signing_date,
        )
    else:
        raise CredentialError(f"unknown credential strategy {kind}")
    return OutgoingRequest(request.method, request.url, headers, request.body)


def inject_credential(
    request: httpx.Request,
    token: ConnectionToken,
    strategy: Optional[CredentialStrategy] = None,
    *,
    signing_date: Optional[datetime] = None,
) -> httpx.Request:
    """A copy of an ``httpx.Request`` carrying the connection's credential."""
    body = request.read()
    # Host and Content-Length are the transport's: signed (Host) or set after signing (length).
    headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
    prepared = apply_credential(
        OutgoingRequest(request.method, str(request.url), headers, body),
        token,
        resolve_strategy(token, strategy),
        signing_date=signing_date,
    )
    return httpx.Request(
        prepared.method,
        prepared.url,
        headers=prepared.headers,
        content=body or None,
        extensions=request.extensions,
    )


def _field(token: Mapping[str, object], name: str) -> str:
    value = token.get(name)
    if not value or not isinstance(value, str):
        raise CredentialError(f"connection {token.get('connection_id')} has no {name} for this strategy")
    return value


def _scheme(token_type: str) -> str:
    # Token endpoints often say "bearer"; some APIs accept the scheme only as RFC 6750 spells it.
    return "Bearer" if not token_type or token_type.lower() == "bearer" else token_type

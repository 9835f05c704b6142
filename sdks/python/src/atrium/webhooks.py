"""Verification of Atrium's webhooks (Standard Webhooks: webhook-id, webhook-timestamp,
webhook-signature)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Union

DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(Exception):
    """The request is not a valid webhook from Atrium for this secret."""


@dataclass(frozen=True)
class WebhookEvent:
    """A verified event. ``id`` is the same on every retry: use it to deduplicate."""

    id: str
    type: str
    timestamp: str
    data: Dict[str, Any]


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return ""


def _secret_key(secret: str) -> bytes:
    encoded = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise WebhookVerificationError("the secret is not whsec_ followed by base64")
    return key


def verify_webhook(
    secret: str,
    headers: Mapping[str, str],
    body: Union[str, bytes],
    *,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> WebhookEvent:
    """Checks the timestamp is within ``tolerance_seconds`` of now (either way) and that one of
    the space-separated ``v1,`` signatures is the HMAC-SHA256 of ``{id}.{timestamp}.{body}``
    under the subscription secret, compared in constant time. Pass the body exactly as received.
    Raises WebhookVerificationError otherwise."""
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError(
            "webhook-id, webhook-timestamp and webhook-signature are required"
        )
    if not timestamp.isdigit():
        raise WebhookVerificationError("webhook-timestamp is invalid")
    current = int(time.time() if now is None else now)
    if abs(current - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("webhook-timestamp is outside the tolerance")
    raw = body.encode() if isinstance(body, str) else body
    signed = f"{msg_id}.{timestamp}.".encode() + raw
    expected = base64.b64encode(hmac.new(_secret_key(secret), signed, hashlib.sha256).digest())
    valid = False
    for entry in signatures.split(" "):
        version, _, encoded = entry.partition(",")
        # Every candidate is compared, so the time taken does not tell which one matched.
        if version == "v1" and hmac.compare_digest(encoded.encode(), expected):
            valid = True
    if not valid:
        raise WebhookVerificationError("no webhook-signature matches")
    try:
        event = json.loads(raw)
    except ValueError as error:
        raise WebhookVerificationError("the body is not JSON") from error
    return WebhookEvent(
        id=msg_id,
        type=event.get("type", ""),
        timestamp=event.get("timestamp", ""),
        data=event.get("data", {}),
    )

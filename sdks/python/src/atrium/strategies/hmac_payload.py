"""HMAC-SHA256 of the exact body bytes, hex, in a header (GitHub/Stripe-style webhooks)."""

from __future__ import annotations

import hashlib
import hmac

DEFAULT_SIGNATURE_HEADER = "X-Signature"


def sign_payload(body: bytes, secret: str, prefix: str = "") -> str:
    return prefix + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()

"""Connection tokens reused until shortly before they expire."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Callable, Dict, Optional, Tuple

from .types import ConnectionToken

DEFAULT_EXPIRY_SKEW = 30.0
DEFAULT_STATIC_TTL = 60.0


class TokenCache:
    """``expiry_skew`` seconds before expires_at a token counts as expired; a credential without
    expires_at (a static key) is reused for ``static_ttl`` seconds, so a revocation reaches this
    process within that time."""

    def __init__(
        self,
        expiry_skew: float = DEFAULT_EXPIRY_SKEW,
        static_ttl: float = DEFAULT_STATIC_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._skew = expiry_skew
        self._static_ttl = static_ttl
        self._clock = clock
        self._entries: Dict[str, Tuple[ConnectionToken, float]] = {}

    def get(self, key: str) -> Optional[ConnectionToken]:
        entry = self._entries.get(key)
        if entry is None:
            return None
        token, usable_until = entry
        if self._clock() >= usable_until:
            del self._entries[key]
            return None
        return token

    def set(self, key: str, token: ConnectionToken) -> None:
        expires_at = _parse_time(token.get("expires_at"))
        now = self._clock()
        usable_until = now + self._static_ttl if expires_at is None else expires_at - self._skew
        if usable_until > now:
            self._entries[key] = (token, usable_until)
        else:
            self._entries.pop(key, None)

    def delete(self, key: str) -> None:
        self._entries.pop(key, None)

    def clear(self) -> None:
        self._entries.clear()


def _parse_time(value: Optional[str]) -> Optional[float]:
    if not value:
        return None
    try:
        # RFC 3339 with Z; fromisoformat takes at most microseconds, the gateway may send nanos.
        text = value.replace("Z", "+00:00")
        if "." in text:
            head, rest = text.split(".", 1)
            digits = len(rest) - len(rest.lstrip("0123456789"))
            text = f"{head}.{rest[:min(digits, 6)]}{rest[digits:]}"
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None

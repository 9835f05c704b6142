"""One lock per key, so that concurrent callers asking for one connection's token share one
request; threads for the sync client, tasks of one event loop for the async one."""

from __future__ import annotations

import asyncio
import threading
from typing import Dict


class KeyLocks:
    def __init__(self) -> None:
        self._locks: Dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def __call__(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())


class AsyncKeyLocks:
    def __init__(self) -> None:
        self._locks: Dict[str, asyncio.Lock] = {}

    def __call__(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

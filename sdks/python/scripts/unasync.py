"""Writes the sync gateway client (src/atrium/gateway.py) from the async one (gateway_async.py).

The two clients differ only in ``async``/``await`` and in the names of their async parts, so
gateway_async.py is written by hand and gateway.py is generated from it, the way httpcore keeps
its sync code. After editing gateway_async.py run ``python3 sdks/python/scripts/unasync.py``;
tests/test_unasync.py fails while gateway.py is not what this script writes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "atrium"
SOURCE = PACKAGE / "gateway_async.py"
TARGET = PACKAGE / "gateway.py"

HEADER = (
    "# Generated from gateway_async.py by sdks/python/scripts/unasync.py: edit that file and run\n"
    "# the script; tests/test_unasync.py fails while this one is out of date.\n"
)

# Whole words of the async client and their sync counterparts; ``httpx.AsyncClient`` goes
# through ``AsyncClient``.
RENAMES = {
    "AsyncGatewayClient": "GatewayClient",
    "AsyncTransport": "SyncTransport",
    "AsyncConnectionAuth": "ConnectionAuth",
    "AsyncKeyLocks": "KeyLocks",
    "AsyncClient": "Client",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "aclose": "close",
}


def generate(source: str) -> str:
    """The sync module for the async module's text."""
    code = re.sub(r"\basync (def|with|for) ", r"\1 ", source)
    code = re.sub(r"\bawait ", "", code)
    for async_name, sync_name in RENAMES.items():
        code = re.sub(rf"\b{async_name}\b", sync_name, code)
    code = code.replace("The gateway client (async)", "The gateway client (sync)", 1)
    left = re.search(r"\b(async|await|asyncio|Async\w*)\b", code)
    if left is not None:
        raise ValueError(f"gateway_async.py: no sync counterpart for {left.group(0)!r}")
    return HEADER + code


def main() -> int:
    TARGET.write_text(generate(SOURCE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

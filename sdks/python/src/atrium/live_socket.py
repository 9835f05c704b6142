"""A WebSocket to a provider, opened with a broker connection's credential and kept open across
credential rotations, speaking the Atrium live-socket protocol (docs/sdk.md, "Live connections"):

- every (re)connection starts with ``{"type":"hello","session":S}``; S is fixed for the socket's
  life, so the server can tell a reconnection from a new client;
- the caller's messages go out as ``{"type":"message","id":N,"data":…}``, N = 1, 2, … across
  reconnections; the server answers ``{"type":"ack","id":N}`` (everything up to N arrived) and
  ``send()`` returns only then;
- after a reconnection every unacknowledged message is sent again with its id, in order;
- the server's own messages are ``{"type":"message","data":…}``, handed to ``on_message``.

asyncio only: the client of Debian's ``websockets`` (10.x, ``python3-websockets``) is asyncio; its
threaded client arrived in 12.0. Needs ``pip install atrium-sdk[live]``.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, List, Literal, Optional, Tuple, TypedDict, Unpack

import websockets.client
import websockets.exceptions

from .errors import AttentionRequired, ConnectionNotActive, ConnectionRevoked, CredentialError
from .gateway_async import AsyncGatewayClient
from .strategies.inject import OutgoingRequest, apply_credential, resolve_strategy
from .types import ConnectionToken, CredentialStrategy

LiveSocketState = Literal["connecting", "open", "reconnecting", "closed"]

# Close codes with which a server says the credential is no longer good.
_AUTH_CLOSE_CODES = {4401, 1008}
# Our own close before a rotation: the server may treat it as a normal goodbye.
_ROTATION_CLOSE_CODE = 4000
# Strategies a WebSocket upgrade can carry; the signing ones sign a body an upgrade has not.
_UPGRADE_STRATEGIES = {"oauth2", "api_key", "basic_auth", "query_param"}
_FINAL_ERRORS = (ConnectionRevoked, AttentionRequired, ConnectionNotActive, CredentialError)


class LiveSocketClosed(Exception):
    """A send the socket could not confirm because it was closed or gave up first."""


@dataclass
class _Pending:
    id: int
    frame: str
    done: "asyncio.Future[None]"


class LiveSocket:
    """Use :func:`open_live_socket`. ``await send(data)`` returns when the server acknowledged the
    message; ``await close()`` ends it; ``await wait_closed()`` returns after ``close()`` and raises
    the reason when the socket gave up (``ConnectionRevoked``, ``AttentionRequired``, …)."""

    def __init__(
        self,
        gateway: AsyncGatewayClient,
        connection_id: str,
        url: str,
        *,
        workspace_id: Optional[str] = None,
        strategy: Optional[CredentialStrategy] = None,
        refresh_before: float = 60.0,
        initial_backoff: float = 0.25,
        max_backoff: float = 10.0,
        max_auth_failures: int = 3,
        on_message: Optional[Callable[[Any], None]] = None,
        on_state_change: Optional[Callable[[LiveSocketState, Optional[BaseException]], None]] = None,
    ) -> None:
        self._gateway = gateway
        self._connection_id = connection_id
        self._url = url
        self._workspace_id = workspace_id
        self._strategy = strategy
        self._refresh_before = refresh_before
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._max_auth_failures = max_auth_failures
        self._on_message = on_message
        self._on_state_change = on_state_change
        self._session = str(uuid.uuid4())
        self._pending: List[_Pending] = []
        self._next_id = 1
        self._state: LiveSocketState = "connecting"
        self._socket: Optional[websockets.client.WebSocketClientProtocol] = None
        self._stopped = asyncio.Event()
        self._error: Optional[BaseException] = None
        self._task = asyncio.get_running_loop().create_task(self._run())

    @property
    def state(self) -> LiveSocketState:
        return self._state

    async def send(self, data: Any) -> None:
        if self._stopped.is_set():
            raise LiveSocketClosed("the live socket is closed")
        message_id = self._next_id
        self._next_id += 1
        item = _Pending(
            message_id,
            json.dumps({"type": "message", "id": message_id, "data": data}),
            asyncio.get_running_loop().create_future(),
        )
        self._pending.append(item)
        socket = self._socket
        if socket is not None and self._state == "open":
            try:
                await socket.send(item.frame)
            except websockets.exceptions.ConnectionClosed:
                pass  # still pending: resent after the reconnection
        # A caller that gives up waiting does not withdraw the message: it stays queued.
        await asyncio.shield(item.done)

    async def close(self) -> None:
        self._stop(None)
        await self._task

    async def wait_closed(self) -> None:
        await self._task
        if self._error is not None:
            raise self._error

    async def __aenter__(self) -> "LiveSocket":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _set_state(self, state: LiveSocketState, reason: Optional[BaseException] = None) -> None:
        self._state = state
        if self._on_state_change is not None:
            self._on_state_change(state, reason)

    def _stop(self, error: Optional[BaseException]) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._error = error
        reason = error or LiveSocketClosed("the live socket was closed before the server acknowledged")
        for item in self._pending:
            if not item.done.done():
                item.done.set_exception(reason)
        self._pending.clear()
        if self._socket is not None:
            asyncio.get_running_loop().create_task(self._socket.close(1000))

    async def _pause(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stopped.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _credential(self, mode: str) -> ConnectionToken:
        scope = {"workspace_id": self._workspace_id}
        if mode == "cached":
            return await self._gateway.get_token(self._connection_id, **scope)
        token = await self._gateway.get_token(self._connection_id, bypass_cache=True, **scope)
        # A refused access token is renewed; a static key can only be fetched again.
        if mode == "refresh" and token.get("auth_type") == "oauth2":
            await self._gateway.refresh_connection(self._connection_id, **scope)
            token = await self._gateway.get_token(self._connection_id, bypass_cache=True, **scope)
        return token

    def _upgrade(self, token: ConnectionToken) -> Tuple[str, dict]:
        strategy = resolve_strategy(token, self._strategy)
        if strategy.get("type") not in _UPGRADE_STRATEGIES:
            raise CredentialError(f"{strategy.get('type')} credentials cannot be sent on a WebSocket upgrade")
        prepared = apply_credential(OutgoingRequest("GET", self._url, {}, b""), token, strategy)
        return prepared.url, dict(prepared.headers)

    def _rotation_delay(self, token: ConnectionToken) -> Optional[float]:
        expires_at = token.get("expires_at")
        if not expires_at:
            return None
        expiry = datetime.fromisoformat(str(expires_at).replace("Z", "+00:00")).timestamp()
        return max(0.0, expiry - self._refresh_before - time.time())

    async def _run(self) -> None:
        self._set_state("connecting")
        mode = "cached"  # the cached credential, a "fresh" copy (rotation) or a "refresh" (refused)
        failures = 0
        auth_failures = 0

        async def back_off(reason: BaseException) -> None:
            nonlocal failures
            self._set_state("reconnecting", reason)
            delay = min(self._max_backoff, self._initial_backoff * 2**failures)
            failures += 1
            # Full jitter: many clients dropped by one server restart do not return in step.
            await self._pause(random.random() * delay)

        async def auth_refused(reason: BaseException) -> None:
            nonlocal auth_failures, mode
            auth_failures += 1
            mode = "refresh"
            if auth_failures > self._max_auth_failures:
                message = f"the server refused {auth_failures} fresh credentials of connection {self._connection_id}"
                error = LiveSocketClosed(message)
                error.__cause__ = reason
                self._stop(error)
            elif auth_failures == 1:
                self._set_state("reconnecting", reason)  # a rotation: straight back
            else:
                await back_off(reason)

        while not self._stopped.is_set():
            try:
                token = await self._credential(mode)
                url, headers = self._upgrade(token)
            except _FINAL_ERRORS as error:
                self._stop(error)
                break
            except Exception as error:  # the gateway unreachable or failing: try again later
                await back_off(error)
                continue
            if self._stopped.is_set():
                break
            try:
                socket = await websockets.client.connect(url, extra_headers=headers)
            except websockets.exceptions.InvalidStatusCode as error:
                if error.status_code in (401, 403):
                    await auth_refused(error)
                else:
                    await back_off(error)
                continue
            except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException) as error:
                await back_off(error)
                continue
            if self._stopped.is_set():
                await socket.close(1000)
                break
            rotating = False

            def rotate() -> None:
                nonlocal rotating
                rotating = True
                asyncio.get_running_loop().create_task(socket.close(_ROTATION_CLOSE_CODE, "credential rotation"))

            timer = None
            self._socket = socket
            try:
                failures = 0
                mode = "cached"
                await socket.send(json.dumps({"type": "hello", "session": self._session}))
                # By index: a send() made during the resend joins the list and goes out here too.
                index = 0
                while index < len(self._pending):
                    await socket.send(self._pending[index].frame)
                    index += 1
                delay = self._rotation_delay(token)
                if delay is not None:
                    timer = asyncio.get_running_loop().call_later(delay, rotate)
                self._set_state("open")
                async for raw in socket:
                    if self._receive(raw):
                        auth_failures = 0  # a confirmed message means the credential was accepted
            except websockets.exceptions.ConnectionClosed:
                pass
            finally:
                if timer is not None:
                    timer.cancel()
                self._socket = None
            if self._stopped.is_set():
                break
            code = socket.close_code
            reason = LiveSocketClosed(f"closed: {code} {socket.close_reason}")
            if code in _AUTH_CLOSE_CODES:
                await auth_refused(reason)
            elif rotating:
                mode = "fresh"
                self._set_state("reconnecting", reason)
            else:
                await back_off(reason)
        self._set_state("closed", self._error)

    def _receive(self, raw: Any) -> bool:
        """Handles one frame; True when it acknowledged messages."""
        try:
            frame = json.loads(raw)
        except ValueError:
            return False
        if not isinstance(frame, dict):
            return False
        if frame.get("type") == "ack" and isinstance(frame.get("id"), int):
            while self._pending and self._pending[0].id <= frame["id"]:
                item = self._pending.pop(0)
                if not item.done.done():
                    item.done.set_result(None)
            return True
        if frame.get("type") == "message" and self._on_message is not None:
            self._on_message(frame.get("data"))
        return False


class LiveSocketOptions(TypedDict, total=False):
    """The keyword options of :class:`LiveSocket`, with the defaults it gives them."""

    workspace_id: Optional[str]
    strategy: Optional[CredentialStrategy]
    refresh_before: float
    initial_backoff: float
    max_backoff: float
    max_auth_failures: int
    on_message: Optional[Callable[[Any], None]]
    on_state_change: Optional[Callable[[LiveSocketState, Optional[BaseException]], None]]


def open_live_socket(
    gateway: AsyncGatewayClient,
    connection_id: str,
    url: str,
    **options: Unpack[LiveSocketOptions],
) -> LiveSocket:
    """Opens (in the background) a live socket to ``url`` with the connection's credential; call
    from a running event loop. Times are in seconds."""
    return LiveSocket(gateway, connection_id, url, **options)

"""The live socket against a real WebSocket server on loopback that speaks the server side of the
protocol (docs/sdk.md): it accepts only the current credential, keeps the highest id delivered per
session, delivers the next id only, acknowledges resends, and rotates the credential mid-stream."""

import asyncio
import json
import os
from http import HTTPStatus
from datetime import datetime, timedelta, timezone

import httpx
import pytest

try:
    import websockets.server
except ImportError:  # pragma: no cover - depends on the machine
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("websockets is not installed (apt-get install python3-websockets)", allow_module_level=True)

from atrium import AsyncGatewayClient, ConnectionRevoked
from atrium.live_socket import LiveSocketClosed, open_live_socket


class World:
    """The provider's socket server and a scripted gateway whose refresh issues the next token."""

    def __init__(self) -> None:
        self.generation = 1
        self.accepted = "Bearer at-1"
        self.refreshes = 0
        self.token_calls = 0
        self.revoked = False
        self.expires_at = None  # of the first token the gateway hands out; later ones last an hour
        self.highest = {}  # session -> highest id delivered
        self.delivered = []
        self.upgrades = []  # (credential, status)
        self.hellos = []
        self.sockets = set()
        self.dropped = set()
        self.on_delivered = None
        self.swallow_ack_of = None

    def gateway_answer(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/v1/refresh/"):
            self.refreshes += 1
            self.generation += 1
            return httpx.Response(200, json={"status": "active"})
        if self.revoked:
            return httpx.Response(410, json={"code": "connection_revoked"})
        self.token_calls += 1
        token = {"connection_id": "c", "auth_type": "oauth2", "token_type": "bearer",
                 "access_token": f"at-{self.generation}", "strategy": {"type": "oauth2"}}
        if self.expires_at is not None:
            token["expires_at"] = self.expires_at if self.token_calls == 1 else (
                datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
            self.generation += 1  # every fetch is a new credential
        return httpx.Response(200, json=token)

    async def process_request(self, path, headers):
        credential = headers.get("authorization")
        status = 101 if self.accepted is None or credential == self.accepted else 401
        self.upgrades.append((credential, status))
        if status == 401:
            return (HTTPStatus.UNAUTHORIZED, [], b"stale credential\n")
        return None

    async def handler(self, socket) -> None:
        self.sockets.add(socket)
        try:
            session = None
            async for raw in socket:
                frame = json.loads(raw)
                if socket in self.dropped:
                    continue
                if frame["type"] == "hello":
                    session = frame["session"]
                    self.hellos.append((session, socket.request_headers.get("authorization")))
                    self.highest.setdefault(session, 0)
                    await socket.send(json.dumps({"type": "message", "data": "welcome"}))
                    continue
                if frame["id"] == self.highest[session] + 1:
                    self.highest[session] = frame["id"]
                    self.delivered.append(frame["data"])
                    if self.swallow_ack_of == frame["id"]:
                        # Delivered but not acknowledged: the client must resend, the server drop it.
                        self.swallow_ack_of = None
                        await self.rotate()
                        continue
                    if self.on_delivered is not None:
                        await self.on_delivered(frame["id"])
                if frame["id"] <= self.highest[session]:
                    await socket.send(json.dumps({"type": "ack", "id": frame["id"]}))
        except websockets.exceptions.ConnectionClosed:
            pass
        finally:
            self.sockets.discard(socket)

    async def rotate(self) -> None:
        """The provider stops accepting the current credential and drops every socket with 4401."""
        self.accepted = f"Bearer at-{self.generation + 1}"
        for socket in list(self.sockets):
            self.dropped.add(socket)
            # Not awaited: the handler must keep reading (and ignoring) what is already on the way,
            # or the close handshake waits behind a full receive queue.
            asyncio.get_running_loop().create_task(socket.close(4401, "credential rotated"))


async def serve(world: World):
    server = await websockets.server.serve(world.handler, "127.0.0.1", 0, process_request=world.process_request)
    port = server.sockets[0].getsockname()[1]
    gateway = AsyncGatewayClient("http://gw.test", http=httpx.AsyncClient(transport=httpx.MockTransport(world.gateway_answer)))
    return server, gateway, f"ws://127.0.0.1:{port}/events"


def run(scenario):
    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_rotation_mid_stream_loses_nothing_and_delivers_nothing_twice():
    async def scenario():
        world = World()
        server, gateway, url = await serve(world)
        received = []

        async def on_delivered(message_id: int) -> None:
            if message_id == 100:
                await world.rotate()

        world.on_delivered = on_delivered
        world.swallow_ack_of = 200
        live = open_live_socket(gateway, "c", url, on_message=received.append, initial_backoff=0.01)
        await asyncio.gather(*(live.send({"n": n}) for n in range(1, 301)))
        await live.close()
        server.close()
        await server.wait_closed()
        assert world.delivered == [{"n": n} for n in range(1, 301)]
        assert world.refreshes == 2
        assert len({session for session, _ in world.hellos}) == 1
        assert [credential for _, credential in world.hellos] == ["Bearer at-1", "Bearer at-2", "Bearer at-3"]
        assert "welcome" in received
        assert live.state == "closed"

    run(scenario)


def test_a_refused_upgrade_is_answered_with_a_refreshed_credential():
    async def scenario():
        world = World()
        world.accepted = "Bearer at-2"
        server, gateway, url = await serve(world)
        live = open_live_socket(gateway, "c", url)
        await live.send("hi")
        await live.close()
        server.close()
        await server.wait_closed()
        assert world.upgrades == [("Bearer at-1", 401), ("Bearer at-2", 101)]
        assert world.refreshes == 1
        assert world.delivered == ["hi"]

    run(scenario)


def test_the_socket_rotates_its_credential_before_the_token_expires():
    async def scenario():
        world = World()
        world.expires_at = (datetime.now(timezone.utc) + timedelta(seconds=60.5)).isoformat()
        world.accepted = None  # every credential the gateway issued is good
        opened = asyncio.Event()
        opens = []

        def on_state(state, reason):
            if state == "open":
                opens.append(state)
                if len(opens) == 2:
                    opened.set()

        server, gateway, url = await serve(world)
        live = open_live_socket(gateway, "c", url, refresh_before=60, on_state_change=on_state)
        await live.send("before")
        await opened.wait()
        await live.send("after")
        await live.close()
        server.close()
        await server.wait_closed()
        assert [credential for _, credential in world.hellos] == ["Bearer at-1", "Bearer at-2"]
        assert world.delivered == ["before", "after"]
        assert world.refreshes == 0

    run(scenario)


def test_a_revoked_connection_stops_with_the_typed_error():
    async def scenario():
        world = World()
        server, gateway, url = await serve(world)
        live = open_live_socket(gateway, "c", url, initial_backoff=0.01)
        await live.send("first")
        world.revoked = True
        world.swallow_ack_of = 2  # delivered, then the socket is dropped with 4401 before the ack
        with pytest.raises(ConnectionRevoked):
            await live.send("never confirmed")
        with pytest.raises(ConnectionRevoked):
            await live.wait_closed()
        with pytest.raises(LiveSocketClosed):
            await live.send("after the end")
        server.close()
        await server.wait_closed()
        assert len(world.hellos) == 1
        assert live.state == "closed"

    run(scenario)

"""The gateway client's own logic against httpx.MockTransport: typed errors, one token request
in flight per connection, and the oauth2 refresh-and-retry of ConnectionAuth."""

import asyncio
import json
import threading
import time
from typing import Callable, List

import httpx
import pytest

from atrium import (
    AsyncGatewayClient,
    AtriumError,
    AttentionRequired,
    ConnectionNotActive,
    ConnectionRevoked,
    GatewayClient,
    GatewayError,
)

Handler = Callable[[httpx.Request], httpx.Response]


def client(handler: Handler) -> GatewayClient:
    return GatewayClient("http://gw.test", api_key="k", http=httpx.Client(transport=httpx.MockTransport(handler)))


@pytest.mark.parametrize(
    "status, body, error",
    [
        (409, {"error": "attention_required"}, AttentionRequired),
        (410, {"code": "connection_revoked"}, ConnectionRevoked),
        (400, {"code": "connection_not_active", "message": "failed"}, ConnectionNotActive),
        (404, {"code": "not_found"}, GatewayError),
        (409, {"error": "conflict"}, GatewayError),
    ],
)
def test_connection_answers_map_onto_typed_errors(status: int, body: dict, error: type) -> None:
    gateway = client(lambda request: httpx.Response(status, json=body))
    with pytest.raises(error) as raised:
        gateway.get_token("c-1")
    assert type(raised.value) is error
    assert isinstance(raised.value, AtriumError)
    assert (raised.value.status, raised.value.body) == (status, body)
    if error is not GatewayError:
        assert raised.value.connection_id == "c-1"


def test_requests_carry_the_api_key_workspace_and_escaped_ids() -> None:
    seen: List[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"connection_id": "a/b", "revoked_at": "x"})

    client(handler).revoke_connection("a/b", workspace_id="ws", reason="done")
    assert seen[0].method == "DELETE"
    assert seen[0].url.raw_path == b"/v1/connections/a%2Fb?workspace_id=ws&reason=done"
    assert seen[0].headers["x-api-key"] == "k"
    assert seen[0].headers["user-agent"].startswith("atrium-sdk-python/")


def test_one_token_request_in_flight_per_connection_across_threads() -> None:
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        time.sleep(0.1)
        return httpx.Response(200, json={"connection_id": "c", "access_token": "at"})

    gateway = client(handler)
    threads = [threading.Thread(target=gateway.get_token, args=("c",)) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["/v1/token/c"]
    gateway.get_token("c", bypass_cache=True)
    assert len(calls) == 2


def test_one_token_request_in_flight_per_connection_async() -> None:
    calls = []

    async def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        await asyncio.sleep(0.05)
        return httpx.Response(200, json={"connection_id": request.url.path, "access_token": "at"})

    async def run() -> None:
        gateway = AsyncGatewayClient("http://gw.test", http=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
        tokens = await asyncio.gather(*(gateway.get_token(c) for c in ["a", "a", "b", "a", "b"]))
        assert [t["connection_id"] for t in tokens] == ["/v1/token/a", "/v1/token/a", "/v1/token/b", "/v1/token/a", "/v1/token/b"]
        await gateway.aclose()

    asyncio.run(run())
    assert sorted(calls) == ["/v1/token/a", "/v1/token/b"]


def test_a_failed_token_request_is_not_cached() -> None:
    answers = iter([httpx.Response(503, json={"code": "unavailable"}), httpx.Response(200, json={"access_token": "at"})])
    gateway = client(lambda request: next(answers))
    with pytest.raises(GatewayError):
        gateway.get_token("c")
    assert gateway.get_token("c")["access_token"] == "at"


def oauth_world(resource_accepts: Callable[[str], bool]):
    """A gateway whose refresh rotates the access token, and a resource checking it."""
    state = {"generation": 1, "refreshes": 0, "resource_calls": []}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "gw.test":
            if request.url.path.startswith("/v1/refresh/"):
                state["refreshes"] += 1
                state["generation"] += 1
                return httpx.Response(200, json={"status": "active"})
            return httpx.Response(200, json={
                "connection_id": "c", "auth_type": "oauth2", "access_token": f"at-{state['generation']}",
                "token_type": "bearer", "strategy": {"type": "oauth2"}})
        authorization = request.headers.get("authorization", "")
        state["resource_calls"].append((authorization, request.content))
        return httpx.Response(200 if resource_accepts(authorization) else 401)

    return state, httpx.MockTransport(handler)


def test_auth_refreshes_once_on_401_and_resends_the_body() -> None:
    state, transport = oauth_world(lambda authorization: authorization == "Bearer at-2")
    gateway = GatewayClient("http://gw.test", http=httpx.Client(transport=transport))
    with httpx.Client(transport=transport) as http:
        response = http.post("http://api.test/items", content=b"payload", auth=gateway.auth("c"))
    assert response.status_code == 200
    assert state["refreshes"] == 1
    assert state["resource_calls"] == [("Bearer at-1", b"payload"), ("Bearer at-2", b"payload")]


def test_auth_gives_up_after_one_refresh_and_can_be_told_not_to_retry() -> None:
    state, transport = oauth_world(lambda authorization: False)
    gateway = GatewayClient("http://gw.test", http=httpx.Client(transport=transport))
    with httpx.Client(transport=transport) as http:
        assert http.get("http://api.test/", auth=gateway.auth("c")).status_code == 401
        assert state["refreshes"] == 1
        assert http.get("http://api.test/", auth=gateway.auth("c", refresh_on_unauthorized=False)).status_code == 401
    assert state["refreshes"] == 1


def test_async_auth_refreshes_once_on_401() -> None:
    state, transport = oauth_world(lambda authorization: authorization == "Bearer at-2")

    async def run() -> int:
        gateway = AsyncGatewayClient("http://gw.test", http=httpx.AsyncClient(transport=transport))
        async with httpx.AsyncClient(transport=transport) as http:
            response = await http.get("http://api.test/", auth=gateway.auth("c"))
        return response.status_code

    assert asyncio.run(run()) == 200
    assert state["refreshes"] == 1


def test_update_webhook_sends_only_the_fields_given() -> None:
    # PATCH merges what is sent: an unset field must stay out of the body, False must not.
    seen: List[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"id": "wh/1", "enabled": False})

    client(handler).update_webhook("wh/1", enabled=False)
    assert seen[0].method == "PATCH"
    assert seen[0].url.raw_path == b"/v1/webhooks/wh%2F1"
    assert json.loads(seen[0].content) == {"enabled": False}

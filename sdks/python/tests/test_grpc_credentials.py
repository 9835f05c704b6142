"""The gRPC interceptor against a real gRPC server on loopback that accepts only the current
credential and rotates it, with a scripted gateway whose refresh issues the next access token."""

import os
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

try:
    import grpc
except ImportError:  # pragma: no cover - depends on the machine
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("grpcio is not installed (apt-get install python3-grpcio)", allow_module_level=True)

from atrium import ConnectionRevoked, GatewayClient
from atrium.grpc_credentials import CredentialInterceptor


@pytest.fixture
def world():
    state = {"generation": 1, "refreshes": 0, "accepted": "Bearer at-1", "seen": []}

    def gateway_answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.startswith("/v1/refresh/"):
            state["refreshes"] += 1
            state["generation"] += 1
            return httpx.Response(200, json={"status": "active"})
        if path == "/v1/token/gone":
            return httpx.Response(410, json={"code": "connection_revoked"})
        if path == "/v1/token/key":
            return httpx.Response(200, json={"connection_id": "key", "auth_type": "api_key", "api_key": "k-1",
                                             "strategy": {"type": "api_key", "header_name": "X-Test-Key"}})
        return httpx.Response(200, json={"connection_id": "c", "auth_type": "oauth2", "token_type": "bearer",
                                         "access_token": f"at-{state['generation']}", "strategy": {"type": "oauth2"}})

    def say(request: bytes, context: grpc.ServicerContext) -> bytes:
        metadata = dict(context.invocation_metadata())
        credential = metadata.get("authorization") or f"key {metadata.get('x-test-key')}"
        state["seen"].append(credential)
        if credential != state["accepted"]:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "stale credential")
        return b"ok:" + request

    def watch(request: bytes, context: grpc.ServicerContext):
        metadata = dict(context.invocation_metadata())
        credential = metadata.get("authorization")
        state["seen"].append(credential)
        if credential != state["accepted"]:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "stale credential")
        for i in range(3):
            yield request + b"-" + str(i + 1).encode()
            if state.get("refuse_after_first"):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "revoked")

    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("test.Echo", {
            "Say": grpc.unary_unary_rpc_method_handler(say),
            "Watch": grpc.unary_stream_rpc_method_handler(watch),
        }),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    gateway = GatewayClient("http://gw.test", http=httpx.Client(transport=httpx.MockTransport(gateway_answer)))
    channels = []

    def call_as(connection_id: str):
        channel = grpc.intercept_channel(
            grpc.insecure_channel(f"127.0.0.1:{port}"), CredentialInterceptor(gateway, connection_id)
        )
        channels.append(channel)
        return channel.unary_unary("/test.Echo/Say")

    def stream_as(connection_id: str):
        channel = grpc.intercept_channel(
            grpc.insecure_channel(f"127.0.0.1:{port}"), CredentialInterceptor(gateway, connection_id)
        )
        channels.append(channel)
        return channel.unary_stream("/test.Echo/Watch")

    state["stream_as"] = stream_as

    yield state, call_as
    for channel in channels:
        channel.close()
    server.stop(None)


def test_a_rotated_credential_is_refreshed_once_and_the_call_succeeds(world) -> None:
    state, call_as = world
    say = call_as("c")
    assert say(b"1") == b"ok:1"
    state["accepted"] = "Bearer at-2"  # the server rotates; the cached at-1 is stale
    assert say(b"2") == b"ok:2"
    assert state["refreshes"] == 1
    assert state["seen"] == ["Bearer at-1", "Bearer at-1", "Bearer at-2"]

    state["accepted"] = "nothing"
    with pytest.raises(grpc.RpcError) as refused:
        say(b"3")
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert state["refreshes"] == 2, "one refresh per call, never a loop"


def test_static_keys_go_into_metadata_and_are_never_refreshed(world) -> None:
    state, call_as = world
    state["accepted"] = "key k-1"
    say = call_as("key")
    assert say(b"1") == b"ok:1"
    state["accepted"] = "key k-2"
    with pytest.raises(grpc.RpcError):
        say(b"2")
    assert state["refreshes"] == 0


def test_a_revoked_connection_raises_before_any_call(world) -> None:
    state, call_as = world
    with pytest.raises(ConnectionRevoked):
        call_as("gone")(b"1")
    assert state["seen"] == []


def test_a_server_stream_refused_before_its_first_message_is_refreshed_and_answered(world) -> None:
    state, call_as = world
    watch = state["stream_as"]("c")
    assert list(watch(b"a")) == [b"a-1", b"a-2", b"a-3"]
    state["accepted"] = "Bearer at-2"
    state["seen"].clear()
    assert list(watch(b"b")) == [b"b-1", b"b-2", b"b-3"]
    assert state["refreshes"] == 1
    assert state["seen"] == ["Bearer at-1", "Bearer at-2"]


def test_a_server_stream_refused_after_it_answered_is_not_repeated(world) -> None:
    state, call_as = world
    watch = state["stream_as"]("c")
    state["refuse_after_first"] = True
    received = []
    with pytest.raises(grpc.RpcError) as refused:
        for message in watch(b"c"):
            received.append(message)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert received == [b"c-1"]
    assert state["refreshes"] == 0

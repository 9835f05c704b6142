"""Client options reach the wire: memory API key and JWT, chat host headers, reused httpx clients."""

import httpx

from atrium import ChatClient, GatewayClient, MemoryClient


def recording():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"status": "healthy", "events": []})

    return seen, httpx.MockTransport(handler)


def test_memory_sends_its_api_key_and_jwt_under_the_base_path() -> None:
    seen, transport = recording()
    memory = MemoryClient("http://memory.test/base", api_key="mk", jwt="jwt-1", http=httpx.Client(transport=transport))
    assert memory.health()["status"] == "healthy"
    assert seen[0].url == "http://memory.test/base/api/v1/health"
    assert (seen[0].headers["x-api-key"], seen[0].headers["x-jwt-token"]) == ("mk", "jwt-1")


def test_chat_sends_the_hosts_headers_and_escapes_ids() -> None:
    seen, transport = recording()
    chat = ChatClient("http://host.test/api/v1", headers={"authorization": "Bearer host"},
                      http=httpx.Client(transport=transport))
    assert chat.history("wf/1", "step 2") == []
    assert seen[0].url.raw_path == b"/api/v1/chat/history/wf%2F1/step%202"
    assert seen[0].headers["authorization"] == "Bearer host"


def test_a_caller_supplied_http_client_is_not_closed_by_the_sdk() -> None:
    seen, transport = recording()
    http = httpx.Client(transport=transport)
    with GatewayClient("http://gw.test", http=http) as gateway:
        gateway.get_agent_session("s")
    assert not http.is_closed
    assert seen[0].url.path == "/v1/agent-sessions/s"

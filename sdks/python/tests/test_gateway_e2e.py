"""oidc-provider → broker → gateway → this SDK, all real and on loopback (test/sdk-services.ts)."""

import base64
import hashlib
import hmac

import httpx
import pytest

from atrium import ConnectionRevoked, GatewayClient, GatewayError

WORKSPACE = "ws-python"


def test_oauth_connection_lifecycle(services) -> None:
    gateway = GatewayClient(services["gateway"], api_key=services["gateway_api_key"])
    started = gateway.start_connection(
        services["providers"]["oauth2"], WORKSPACE, return_url="http://localhost:3000/connected"
    )
    connection_id = services.authorize(started["authorization_url"])

    token = gateway.get_token(connection_id, workspace_id=WORKSPACE)
    assert token["strategy"]["type"] == "oauth2" and token["access_token"]
    assert gateway.get_token(connection_id, workspace_id=WORKSPACE) is token, "served from the cache"
    auth = gateway.auth(connection_id, workspace_id=WORKSPACE)
    first = httpx.get(f"{services['resource']}/data", auth=auth)
    assert first.status_code == 200
    assert first.json() == {"resource": "secret-data", "user": "user-1"}

    connection = gateway.get_connection(connection_id, workspace_id=WORKSPACE)
    assert (connection["status"], connection["provider_id"]) == ("active", services["providers"]["oauth2"])
    assert connection_id in [c["id"] for c in gateway.list_connections(workspace_id=WORKSPACE)]
    with pytest.raises(GatewayError) as other_workspace:
        gateway.get_connection(connection_id, workspace_id="ws-elsewhere")
    assert other_workspace.value.status == 404

    agent = gateway.create_agent(WORKSPACE, "agent-py", description="pytest", metadata={"lang": "py"})
    assert gateway.get_agent(agent["id"], workspace_id=WORKSPACE)["metadata"] == {"lang": "py"}
    session = gateway.create_agent_session(agent["id"], connection_id, WORKSPACE)
    assert session["status"] == "open"
    with pytest.raises(GatewayError) as unknown_agent:
        gateway.create_agent_session("never-registered", connection_id, WORKSPACE)
    assert unknown_agent.value.status == 404

    # The stored token expires: retrieval refreshes it at the provider, so does an explicit refresh.
    services.call("POST", "/expire", {"connection_id": connection_id})
    renewed = gateway.get_token(connection_id, workspace_id=WORKSPACE, bypass_cache=True)
    assert renewed["access_token"] != token["access_token"]
    assert gateway.refresh_connection(connection_id, workspace_id=WORKSPACE)["status"] == "active"
    latest = gateway.get_token(connection_id, workspace_id=WORKSPACE)
    assert latest["access_token"] != renewed["access_token"]
    assert httpx.get(f"{services['resource']}/data", auth=auth).status_code == 200

    revoked = gateway.revoke_connection(connection_id, workspace_id=WORKSPACE, reason="pytest finished")
    assert (revoked["token_deleted"], revoked["provider_revoked"]) == (True, True)
    assert gateway.get_agent_session(session["id"])["status"] == "closed"
    disabled = gateway.disable_agent(agent["id"], workspace_id=WORKSPACE)
    assert disabled["disabled_at"]
    assert [(a["id"], a.get("disabled_at")) for a in gateway.list_agents(WORKSPACE)] == [
        (agent["id"], disabled["disabled_at"])
    ]
    with pytest.raises(ConnectionRevoked) as gone:
        gateway.get_token(connection_id, workspace_id=WORKSPACE)
    assert (gone.value.status, gone.value.body) == (410, {"code": "connection_revoked"})
    with pytest.raises(ConnectionRevoked):
        gateway.refresh_connection(connection_id, workspace_id=WORKSPACE)
    with pytest.raises(ConnectionRevoked):
        httpx.get(f"{services['resource']}/data", auth=auth)
    assert gateway.revoke_connection(connection_id, workspace_id=WORKSPACE)["revoked_at"] == revoked["revoked_at"]


def _capture(gateway: GatewayClient, services, strategy: str, **credential: str) -> str:
    captured = gateway.capture_credential(services["providers"][strategy], WORKSPACE, **credential)
    assert captured["status"] == "active"
    return captured["id"]


def _echo(services, auth: httpx.Auth, body: bytes = b'{"n":1}') -> dict:
    response = httpx.post(f"{services['echo']}/items?limit=5", content=body, auth=auth,
                          headers={"content-type": "application/json"})
    assert response.status_code == 200
    return services.call("GET", "/echo-last")


def test_static_credentials_are_injected_per_strategy(services) -> None:
    gateway = GatewayClient(services["gateway"], api_key=services["gateway_api_key"])
    schema = gateway.get_capture_schema(services["providers"]["api_key"])
    assert [f["name"] for f in schema["fields"]] == ["api_key"]

    arrived = _echo(services, gateway.auth(_capture(gateway, services, "api_key", api_key="k-py")))
    assert arrived["headers"]["x-test-key"] == "Key k-py"

    arrived = _echo(services, gateway.auth(_capture(gateway, services, "query_param", api_key="q-py")))
    assert arrived["query"] == {"limit": "5", "key": "q-py"}

    body = b'{"order":42}'
    arrived = _echo(services, gateway.auth(_capture(gateway, services, "hmac_payload", api_key="whsec")), body)
    assert arrived["headers"]["x-signature"] == "sha256=" + hmac.new(b"whsec", body, hashlib.sha256).hexdigest()

    arrived = _echo(services, gateway.auth(_capture(gateway, services, "basic_auth", username="ada", password="pw")))
    assert arrived["headers"]["authorization"] == "Basic " + base64.b64encode(b"ada:pw").decode()

    sigv4 = _capture(gateway, services, "aws_sigv4", username="AKIDEXAMPLE", password="secret")
    arrived = _echo(services, gateway.auth(sigv4))
    authorization = arrived["headers"]["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/execute-api/aws4_request" in authorization
    assert arrived["headers"]["x-amz-content-sha256"] == hashlib.sha256(b'{"n":1}').hexdigest()

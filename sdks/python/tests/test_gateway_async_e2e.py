"""The async gateway client against the real gateway (test/sdk-services.ts)."""

import asyncio

import httpx
import pytest

from atrium import AsyncGatewayClient, ConnectionRevoked

WORKSPACE = "ws-python-async"


def test_async_oauth_connection_and_revocation(services) -> None:
    async def run() -> None:
        async with AsyncGatewayClient(services["gateway"], api_key=services["gateway_api_key"]) as gateway:
            started = await gateway.start_connection(
                services["providers"]["oauth2"], WORKSPACE, return_url="http://localhost:3000/connected"
            )
            connection_id = await asyncio.to_thread(services.authorize, started["authorization_url"])
            tokens = await asyncio.gather(*(gateway.get_token(connection_id, workspace_id=WORKSPACE) for _ in range(3)))
            assert len({t["access_token"] for t in tokens}) == 1
            async with httpx.AsyncClient() as http:
                auth = gateway.auth(connection_id, workspace_id=WORKSPACE)
                response = await http.get(f"{services['resource']}/data", auth=auth)
                assert response.json()["resource"] == "secret-data"
                assert (await gateway.get_connection(connection_id))["status"] == "active"
                await gateway.revoke_connection(connection_id, workspace_id=WORKSPACE)
                with pytest.raises(ConnectionRevoked):
                    await http.get(f"{services['resource']}/data", auth=auth)
            assert [c["status"] for c in await gateway.list_connections(workspace_id=WORKSPACE)] == ["revoked"]

    asyncio.run(run())

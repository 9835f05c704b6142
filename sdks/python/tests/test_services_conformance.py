"""sdks/conformance/services.json against the real services, through the sync and async clients."""

import asyncio
from typing import Any, Dict

import pytest

from atrium import (
    AsyncChatClient,
    AsyncGatewayClient,
    AsyncMemoryClient,
    ChatClient,
    GatewayClient,
    MemoryClient,
)
from conformance import CASES, renamed, run_case, run_case_async


def _methods(gateway: Any, memory: Any, chat: Any) -> Dict[str, Any]:
    """Case call names onto this SDK's methods; identical for the sync and async clients."""
    return {
        "gateway.capture_credential": lambda a: gateway.capture_credential(
            a["provider_id"], a["workspace_id"], api_key=a.get("api_key"),
            username=a.get("username"), password=a.get("password")),
        "gateway.get_capture_schema": lambda a: gateway.get_capture_schema(a["provider_id"]),
        "gateway.get_token": lambda a: gateway.get_token(a["connection_id"], workspace_id=a.get("workspace_id")),
        "gateway.refresh_connection": lambda a: gateway.refresh_connection(
            a["connection_id"], workspace_id=a.get("workspace_id")),
        "gateway.revoke_connection": lambda a: gateway.revoke_connection(
            a["connection_id"], workspace_id=a.get("workspace_id"), reason=a.get("reason")),
        "gateway.get_connection": lambda a: gateway.get_connection(
            a["connection_id"], workspace_id=a.get("workspace_id")),
        "gateway.list_connections": lambda a: gateway.list_connections(workspace_id=a.get("workspace_id")),
        "gateway.start_connection": lambda a: gateway.start_connection(
            a["provider_id"], a["workspace_id"], return_url=a.get("return_url"), scopes=a.get("scopes")),
        "gateway.create_agent": lambda a: gateway.create_agent(
            a["workspace_id"], a["name"], description=a.get("description"), metadata=a.get("metadata")),
        "gateway.get_agent": lambda a: gateway.get_agent(a["agent_id"], workspace_id=a.get("workspace_id")),
        "gateway.list_agents": lambda a: gateway.list_agents(a["workspace_id"]),
        "gateway.disable_agent": lambda a: gateway.disable_agent(a["agent_id"], workspace_id=a.get("workspace_id")),
        "gateway.create_agent_session": lambda a: gateway.create_agent_session(
            a["agent_id"], a["connection_id"], a["workspace_id"]),
        "gateway.get_agent_session": lambda a: gateway.get_agent_session(a["session_id"]),
        "gateway.create_webhook": lambda a: gateway.create_webhook(
            a["name"], a["url"], a["event_types"], secret=a.get("secret"), enabled=a.get("enabled"),
            description=a.get("description")),
        "gateway.list_webhooks": lambda a: gateway.list_webhooks(),
        "gateway.get_webhook": lambda a: gateway.get_webhook(a["webhook_id"]),
        "gateway.update_webhook": lambda a: gateway.update_webhook(
            a["webhook_id"], name=a.get("name"), url=a.get("url"), event_types=a.get("event_types"),
            secret=a.get("secret"), enabled=a.get("enabled"), description=a.get("description")),
        "gateway.delete_webhook": lambda a: gateway.delete_webhook(a["webhook_id"]),
        "gateway.list_webhook_deliveries": lambda a: gateway.list_webhook_deliveries(
            a["webhook_id"], status=a.get("status"), limit=a.get("limit"), offset=a.get("offset")),
        "gateway.rotate_webhook_secret": lambda a: gateway.rotate_webhook_secret(
            a["webhook_id"], overlap_seconds=a.get("overlap_seconds")),
        "gateway.redeliver_webhook": lambda a: gateway.redeliver_webhook(a["webhook_id"], a["delivery_id"]),
        "memory.create_session": lambda a: memory.create_session(
            a["tenant_id"], a["user_id"], agent_id=a.get("agent_id")),
        "memory.store_interaction": lambda a: memory.store_interaction(
            a["session_id"], a["user_message"], agent_response=a.get("agent_response")),
        "memory.store_event": lambda a: memory.store_event(
            a["session_id"], a["type"], role=a.get("role"), content=a.get("content")),
        "memory.get_context": lambda a: memory.get_context(a["session_id"], limit=a.get("limit")),
        "chat.send": lambda a: chat.send(a["message"], workflow_id=a.get("workflow_id")),
        "chat.history": lambda a: chat.history(a["workflow_id"], a["step_id"]),
    }


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_sync_clients(services, case) -> None:
    methods = _methods(
        GatewayClient(services["gateway"], api_key=services["gateway_api_key"]),
        MemoryClient(services["memory"]),
        ChatClient(services["chat"]),
    )
    # Names are per case: each case starts from the fixture's URLs and providers.
    run_case(case, dict(services.urls), lambda name, args: methods[name](args))


def test_async_clients_agree(services) -> None:
    async def run() -> None:
        async with AsyncGatewayClient(services["gateway"], api_key=services["gateway_api_key"]) as gateway, \
                AsyncMemoryClient(services["memory"]) as memory, AsyncChatClient(services["chat"]) as chat:
            methods = _methods(gateway, memory, chat)
            for case in CASES:
                # Fresh workspaces and workflows: the sync run already used the case's own.
                await run_case_async(renamed(case, "a5a5a5"), dict(services.urls),
                                     lambda name, args: methods[name](args))

    asyncio.run(run())

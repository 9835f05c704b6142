"""The memory client against the real memory service (embedded stores), sync and async."""

import asyncio

import pytest

from atrium import AsyncMemoryClient, AtriumError, MemoryClient


def test_every_memory_route_and_the_services_own_errors(services) -> None:
    with MemoryClient(services["memory"]) as memory:
        session = memory.create_session("acme", "u-1", agent_id="helper")
        assert session["session_id"] and session["created_at"]
        assert memory.store_interaction(session["session_id"], "I moved to Lyon last spring",
                                        agent_response="Noted, Lyon it is.")["success"]
        assert memory.store_event(session["session_id"], "thought", role="agent",
                                  content="the user lives in France", metadata={"workflow_id": "wf-1"})["success"]
        context = memory.get_context(session["session_id"], limit=10)
        assert [(e["role"], e["type"]) for e in context["stm_events"]] == [
            ("user", "message"), ("agent", "message"), ("agent", "thought")]
        assert isinstance(memory.search(session["session_id"], "where does the user live"), list)
        assert memory.health()["status"] in ("healthy", "degraded")
        assert isinstance(memory.trigger_graph_analytics()["success"], bool)
        with pytest.raises(AtriumError) as missing:
            memory.get_context("no-such-session")
        assert missing.value.status == 404
        with pytest.raises(AtriumError) as invalid:
            memory.store_event(session["session_id"], "gossip")
        assert invalid.value.status == 400
        thought = memory.store_event(session["session_id"], "thought", content="erase me")
        erased = memory.forget(session["session_id"], event_ids=[thought["event_id"]])
        assert erased["success"] and erased["events_erased"] == 1 and erased["erasure_id"]
        assert memory.forget(session["session_id"], scope="agent")["events_erased"] == 3
        assert memory.get_context(session["session_id"], limit=10)["stm_events"] == []
        with pytest.raises(AtriumError) as refused:
            memory.forget(session["session_id"], event_ids=["not-an-id"])
        assert refused.value.status == 400
        with pytest.raises(ValueError):
            memory.forget(session["session_id"])


def test_async_memory_client(services) -> None:
    async def run() -> None:
        async with AsyncMemoryClient(services["memory"]) as memory:
            session = await memory.create_session("acme", "u-2")
            await memory.store_interaction(session["session_id"], "hello", agent_response="hi")
            await memory.store_event(session["session_id"], "action", role="agent", content="waved")
            context = await memory.get_context(session["session_id"], query="greeting")
            assert len(context["stm_events"]) == 3
            assert isinstance(await memory.search(session["session_id"], "hello", limit=3), list)
            assert (await memory.health())["status"] in ("healthy", "degraded")
            assert isinstance((await memory.trigger_graph_analytics())["success"], bool)
            assert (await memory.forget(session["session_id"], scope="user"))["events_erased"] == 3
            with pytest.raises(AtriumError):
                await memory.get_context("no-such-session")

    asyncio.run(run())


def test_a_retried_write_with_its_idempotency_key_is_stored_once(services) -> None:
    with MemoryClient(services["memory"]) as memory:
        session = memory.create_session("acme", "u-3")["session_id"]
        first = memory.store_interaction(session, "my locker code changed", idempotency_key="k-1")
        again = memory.store_interaction(session, "my locker code changed", idempotency_key="k-1")
        assert again == first
        memory.store_event(session, "thought", role="agent", content="noted", idempotency_key="k-2")
        memory.store_event(session, "thought", role="agent", content="noted", idempotency_key="k-2")
        events = memory.get_context(session, limit=20)["stm_events"]
        assert [(e["role"], e["type"]) for e in events] == [("user", "message"), ("agent", "thought")]

"""The trace iterator against the real chat router: the connection is cut mid-step and the
iterator resumes with Last-Event-ID, so every event arrives exactly once and in order."""

import asyncio
import threading

from atrium import AsyncChatClient, ChatClient


def _check(seen: list, answer: dict) -> None:
    assert answer["status"] == "success"
    assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))
    assert [e["type"] for e in seen] == ["thinking"] * 6 + ["step_complete"]


def test_a_cut_stream_resumes_with_last_event_id(services) -> None:
    workflow_id = "chat_0a1b2c3d4e5f"
    direct = ChatClient(services["chat"])
    via_proxy = ChatClient(services["chat_proxy"])
    answers: dict = {}
    sender = threading.Thread(
        target=lambda: answers.update(a=direct.send("hold", workflow_id=workflow_id)))
    accepted_before = services.call("GET", "/chat/accepted")["accepted"]
    seen = []
    stream = via_proxy.stream(workflow_id, reconnect_delay=0.02)
    sender.start()
    for event in stream:
        seen.append(event)
        if len(seen) == 2:
            services.call("POST", "/chat/cut", {"workflow_id": workflow_id})
    sender.join()
    _check(seen, answers["a"])
    assert services.call("GET", "/chat/accepted")["accepted"] - accepted_before == 2, "one reconnect"
    assert len(direct.history(workflow_id, answers["a"]["step_id"])) == len(seen)


def test_async_stream_resumes_and_history_matches(services) -> None:
    workflow_id = "chat_5f4e3d2c1b0a"

    async def run() -> None:
        async with AsyncChatClient(services["chat"]) as direct, AsyncChatClient(services["chat_proxy"]) as via_proxy:
            seen = []

            async def follow() -> None:
                async for event in via_proxy.stream(workflow_id, reconnect_delay=0.02):
                    seen.append(event)
                    if len(seen) == 2:
                        await asyncio.to_thread(services.call, "POST", "/chat/cut", {"workflow_id": workflow_id})

            following = asyncio.ensure_future(follow())
            answer = await direct.send("hold", workflow_id=workflow_id)
            await following
            _check(seen, answer)
            assert len(await direct.history(workflow_id, answer["step_id"])) == len(seen)

    asyncio.run(run())


def test_resuming_from_an_event_id_replays_only_what_followed(services) -> None:
    with ChatClient(services["chat"]) as chat:
        answer = chat.send("no hold", workflow_id="chat_aaaabbbbcccc")
        assert answer["answer"] == "echo: no hold"
        tail = list(chat.stream("chat_aaaabbbbcccc", last_event_id="5"))
        assert [e["seq"] for e in tail] == [6, 7]

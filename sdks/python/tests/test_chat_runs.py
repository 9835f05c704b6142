"""Chat runs (issue 32) on the documented routes, sync and async, against httpx.MockTransport:
background start, status, resume (waiting and in the background), cancel, a stale resume's 409."""

import asyncio
import json

import httpx
import pytest

from atrium import AsyncChatClient, AtriumError, ChatClient

RUN = {
    "workflow_id": "wf_1", "step_id": "step_1", "status": "yielded", "pause": 1,
    "pending": [{"kind": "approval", "detail": "sending needs approval"}],
    "host": "host_1", "cancel_requested": False,
    "created_at": "1970-01-01T00:00:00.000Z", "updated_at": "1970-01-01T00:00:00.000Z",
}


def host():
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        raw = request.content.decode()
        calls.append((request.method, request.url.raw_path.decode(), raw))
        body = json.loads(raw) if raw else {}
        path = request.url.path
        if path == "/api/v1/chat/runs":
            return httpx.Response(202, json={"workflow_id": body["workflow_id"], "step_id": "step_2",
                                             "status": "running"})
        if path == "/api/v1/chat/runs/wf_1/step_1" and request.method == "GET":
            return httpx.Response(200, json=RUN)
        if path == "/api/v1/chat/runs/wf_1/step_1/resume":
            if body.get("pause") == 0:
                return httpx.Response(409, json={"error": "pause 0 of step step_1 is stale",
                                                 "status": "yielded"})
            if body.get("background"):
                return httpx.Response(202, json={"workflow_id": "wf_1", "step_id": "step_1",
                                                 "status": "running"})
            return httpx.Response(200, json={"workflow_id": "wf_1", "step_id": "step_1",
                                             "status": "success", "answer": "Sent", "sources": [],
                                             "tokens": {}, "elapsed_ms": 3})
        if path == "/api/v1/chat/runs/wf_1/step_1/cancel":
            return httpx.Response(200, json={**RUN, "status": "cancelled",
                                             "reason": "cancelled by request"})
        return httpx.Response(404, json={"error": "unknown run"})

    return calls, httpx.MockTransport(handler)


EXPECTED_CALLS = [
    ("POST", "/api/v1/chat/runs", '{"message":"hi","workflow_id":"wf_1","on_busy":"enqueue"}'),
    ("GET", "/api/v1/chat/runs/wf_1/step_1", ""),
    ("POST", "/api/v1/chat/runs/wf_1/step_1/resume", '{"pause":1,"approval":"approve"}'),
    ("POST", "/api/v1/chat/runs/wf_1/step_1/resume", '{"approval":"approve","background":true}'),
    ("POST", "/api/v1/chat/runs/wf_1/step_1/cancel", ""),
    ("POST", "/api/v1/chat/runs/wf_1/step_1/resume", '{"pause":0}'),
]


def compact(calls):
    """The bodies as compact JSON, whatever spacing the client's encoder uses."""
    return [(m, p, json.dumps(json.loads(b), separators=(",", ":")) if b else b) for m, p, b in calls]


def test_sync_client_starts_reads_resumes_and_cancels_a_run() -> None:
    calls, transport = host()
    chat = ChatClient("http://host.test/api/v1", http=httpx.Client(transport=transport))
    assert chat.start("hi", workflow_id="wf_1", on_busy="enqueue") == {
        "workflow_id": "wf_1", "step_id": "step_2", "status": "running"}
    run = chat.run("wf_1", "step_1")
    assert (run["status"], run["pause"], run["pending"][0]["kind"]) == ("yielded", 1, "approval")
    assert chat.resume("wf_1", "step_1", approval="approve", pause=1)["answer"] == "Sent"
    assert chat.resume_in_background("wf_1", "step_1", approval="approve")["status"] == "running"
    cancelled = chat.cancel("wf_1", "step_1")
    assert (cancelled["status"], cancelled["reason"]) == ("cancelled", "cancelled by request")
    with pytest.raises(AtriumError) as stale:
        chat.resume("wf_1", "step_1", pause=0)
    assert stale.value.status == 409
    assert compact(calls) == EXPECTED_CALLS


def test_async_client_makes_the_same_calls() -> None:
    calls, transport = host()

    async def scenario() -> None:
        chat = AsyncChatClient("http://host.test/api/v1", http=httpx.AsyncClient(transport=transport))
        assert (await chat.start("hi", workflow_id="wf_1", on_busy="enqueue"))["step_id"] == "step_2"
        assert (await chat.run("wf_1", "step_1"))["pause"] == 1
        assert (await chat.resume("wf_1", "step_1", approval="approve", pause=1))["answer"] == "Sent"
        background = await chat.resume_in_background("wf_1", "step_1", approval="approve")
        assert background["status"] == "running"
        assert (await chat.cancel("wf_1", "step_1"))["status"] == "cancelled"
        with pytest.raises(AtriumError) as stale:
            await chat.resume("wf_1", "step_1", pause=0)
        assert stale.value.status == 409
        await chat.aclose()

    asyncio.run(scenario())
    assert compact(calls) == EXPECTED_CALLS


WAITING = {
    "workflow_id": "wf_2", "step_id": "step_9", "pause": 1,
    "pending": [{"kind": "approval", "detail": "sending needs approval"}],
    "draft": "Release is out", "message": "tell the team",
    "asked_by": {"user_id": "ana", "agent_id": "chat", "workflow_id": "wf_2"},
    "asked_at": "1970-01-01T00:00:00.000Z", "created_at": "1970-01-01T00:00:00.000Z",
}


def waiting_host():
    urls = []

    def handler(request: httpx.Request) -> httpx.Response:
        urls.append((request.method, request.url.raw_path.decode()))
        if request.url.path != "/api/v1/chat/runs" or request.method != "GET":
            return httpx.Response(404, json={"error": "not found"})
        if request.url.params.get("limit") == "0":
            return httpx.Response(400, json={"error": "limit must be an integer from 1 to 200"})
        if "cursor" in request.url.params:
            return httpx.Response(200, json={"runs": []})
        return httpx.Response(200, json={"runs": [WAITING], "next_cursor": "c1"})

    return urls, httpx.MockTransport(handler)


EXPECTED_WAITING = [
    ("GET", "/api/v1/chat/runs?status=yielded&pending=approval&limit=1"),
    ("GET", "/api/v1/chat/runs?status=yielded&pending=approval&limit=1&cursor=c1"),
    ("GET", "/api/v1/chat/runs?status=yielded"),
    ("GET", "/api/v1/chat/runs?status=yielded&limit=0"),
]


def test_sync_client_lists_the_approvals_page_by_page() -> None:
    urls, transport = waiting_host()
    chat = ChatClient("http://host.test/api/v1", http=httpx.Client(transport=transport))
    page = chat.waiting(pending="approval", limit=1)
    assert page == {"runs": [WAITING], "next_cursor": "c1"}
    assert chat.waiting(pending="approval", limit=1, cursor=page["next_cursor"]) == {"runs": []}
    chat.waiting()
    with pytest.raises(AtriumError) as refused:
        chat.waiting(limit=0)
    assert refused.value.status == 400
    assert urls == EXPECTED_WAITING


def test_async_client_lists_the_same_way() -> None:
    urls, transport = waiting_host()

    async def scenario() -> None:
        chat = AsyncChatClient("http://host.test/api/v1", http=httpx.AsyncClient(transport=transport))
        page = await chat.waiting(pending="approval", limit=1)
        assert page["runs"][0]["draft"] == "Release is out"
        assert await chat.waiting(pending="approval", limit=1, cursor=page["next_cursor"]) == {
            "runs": []}
        await chat.waiting()
        with pytest.raises(AtriumError) as refused:
            await chat.waiting(limit=0)
        assert refused.value.status == 400
        await chat.aclose()

    asyncio.run(scenario())
    assert urls == EXPECTED_WAITING

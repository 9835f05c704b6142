"""The chat router: run a message on the kernel, follow its trace, read a step's history."""

from __future__ import annotations

from typing import Any, AsyncIterator, Dict, Iterator, List, Literal, Mapping, Optional

import httpx

from ._http import Call, segment
from ._transport import AsyncTransport, SyncTransport
from .trace_stream import follow_trace, follow_trace_async
from .types import ChatResponse, ChatRun, ChatRunAccepted, ChatWaitingPage, TraceEvent

OnBusy = Literal["reject", "enqueue", "interrupt"]


def _present(body: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def _send(message: str, workflow_id: Optional[str], agent_id: Optional[str],
          system_prompt: Optional[str], context: Optional[Dict[str, Any]],
          on_busy: Optional[OnBusy] = None, path: str = "chat") -> Call:
    return Call("POST", path, body=_present({
        "message": message, "workflow_id": workflow_id, "agent_id": agent_id,
        "system_prompt": system_prompt, "context": context, "on_busy": on_busy}))


def _run_path(workflow_id: str, step_id: str) -> str:
    return f"chat/runs/{segment(workflow_id)}/{segment(step_id)}"


def _resume(workflow_id: str, step_id: str, pause: Optional[int], approval: Optional[str],
            connection_id: Optional[str], context: Optional[Dict[str, Any]],
            background: bool) -> Call:
    return Call("POST", _run_path(workflow_id, step_id) + "/resume", body=_present({
        "pause": pause, "approval": approval, "connection_id": connection_id, "context": context,
        "background": True if background else None}))


def _waiting(pending: Optional[str], limit: Optional[int], cursor: Optional[str]) -> Call:
    return Call("GET", "chat/runs", params={
        "status": "yielded", "pending": pending, "limit": limit, "cursor": cursor})


def _history(workflow_id: str, step_id: str) -> Call:
    return Call("GET", f"chat/history/{segment(workflow_id)}/{segment(step_id)}", unwrap="events")


def _stream_path(workflow_id: str) -> str:
    return f"chat/stream/{segment(workflow_id)}"


class ChatClient:
    """``ChatClient("http://127.0.0.1:8000/api/v1", headers={...})``: ``url`` is where the host
    mounted the chat router; ``headers`` carry whatever the host authenticates with."""

    def __init__(self, url: str, *, headers: Optional[Mapping[str, str]] = None,
                 http: Optional[httpx.Client] = None, timeout: float = 120.0) -> None:
        self._t = SyncTransport(url, headers or {}, http, timeout)

    def __enter__(self) -> "ChatClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._t.close()

    def send(self, message: str, *, workflow_id: Optional[str] = None,
             agent_id: Optional[str] = None, system_prompt: Optional[str] = None,
             context: Optional[Dict[str, Any]] = None,
             on_busy: Optional[OnBusy] = None) -> ChatResponse:
        """Runs one message on the kernel and waits for the answer. Supply ``workflow_id`` to
        open the trace stream before the answer arrives; ``on_busy`` says what to do while
        another step of the workflow runs (default ``reject``: 409)."""
        return self._t.send(_send(message, workflow_id, agent_id, system_prompt, context, on_busy))

    def stream(self, workflow_id: str, *, last_event_id: Optional[str] = None,
               max_reconnects: int = 5, reconnect_delay: float = 1.0) -> Iterator[TraceEvent]:
        """Live trace events until a terminal one, resuming with Last-Event-ID after a drop."""
        return follow_trace(self._t.http, self._t.base + _stream_path(workflow_id), self._t.headers,
                            last_event_id=last_event_id, max_reconnects=max_reconnects,
                            reconnect_delay=reconnect_delay)

    def history(self, workflow_id: str, step_id: str) -> List[TraceEvent]:
        return self._t.send(_history(workflow_id, step_id))

    def start(self, message: str, *, workflow_id: Optional[str] = None,
              agent_id: Optional[str] = None, system_prompt: Optional[str] = None,
              context: Optional[Dict[str, Any]] = None,
              on_busy: Optional[OnBusy] = None) -> ChatRunAccepted:
        """Starts a message in the background: answers at once with the step's ids (HTTP 202)."""
        return self._t.send(_send(message, workflow_id, agent_id, system_prompt, context, on_busy,
                                  "chat/runs"))

    def run(self, workflow_id: str, step_id: str) -> ChatRun:
        """The step's run: status, pause, pending, last answer."""
        return self._t.send(Call("GET", _run_path(workflow_id, step_id)))

    def resume(self, workflow_id: str, step_id: str, *, pause: Optional[int] = None,
               approval: Optional[Literal["approve", "deny"]] = None,
               connection_id: Optional[str] = None,
               context: Optional[Dict[str, Any]] = None) -> ChatResponse:
        """Resumes a yielded step with what it waits for and waits for its answer; a stale or
        second resume raises AtriumError with status 409."""
        return self._t.send(_resume(workflow_id, step_id, pause, approval, connection_id, context,
                                    False))

    def resume_in_background(self, workflow_id: str, step_id: str, *, pause: Optional[int] = None,
                             approval: Optional[Literal["approve", "deny"]] = None,
                             connection_id: Optional[str] = None,
                             context: Optional[Dict[str, Any]] = None) -> ChatRunAccepted:
        """Resumes a yielded step in the background (HTTP 202)."""
        return self._t.send(_resume(workflow_id, step_id, pause, approval, connection_id, context,
                                    True))

    def cancel(self, workflow_id: str, step_id: str) -> ChatRun:
        """Stops a queued, running or yielded step on whichever host runs it; the run afterwards."""
        return self._t.send(Call("POST", _run_path(workflow_id, step_id) + "/cancel"))

    def waiting(self, *, pending: Optional[str] = None, limit: Optional[int] = None,
                cursor: Optional[str] = None) -> ChatWaitingPage:
        """The steps waiting for something, newest pause first (``GET /chat/runs?status=yielded``);
        ``pending="approval"`` lists the approvals to decide. Pass a page's ``next_cursor`` as
        ``cursor`` for the next; a bad field raises AtriumError with status 400."""
        return self._t.send(_waiting(pending, limit, cursor))


class AsyncChatClient:
    """The async twin of ChatClient; ``stream`` is an async iterator."""

    def __init__(self, url: str, *, headers: Optional[Mapping[str, str]] = None,
                 http: Optional[httpx.AsyncClient] = None, timeout: float = 120.0) -> None:
        self._t = AsyncTransport(url, headers or {}, http, timeout)

    async def __aenter__(self) -> "AsyncChatClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._t.aclose()

    async def send(self, message: str, *, workflow_id: Optional[str] = None,
                   agent_id: Optional[str] = None, system_prompt: Optional[str] = None,
                   context: Optional[Dict[str, Any]] = None,
                   on_busy: Optional[OnBusy] = None) -> ChatResponse:
        return await self._t.send(_send(message, workflow_id, agent_id, system_prompt, context,
                                        on_busy))

    def stream(self, workflow_id: str, *, last_event_id: Optional[str] = None,
               max_reconnects: int = 5, reconnect_delay: float = 1.0) -> AsyncIterator[TraceEvent]:
        return follow_trace_async(self._t.http, self._t.base + _stream_path(workflow_id),
                                  self._t.headers, last_event_id=last_event_id,
                                  max_reconnects=max_reconnects, reconnect_delay=reconnect_delay)

    async def history(self, workflow_id: str, step_id: str) -> List[TraceEvent]:
        return await self._t.send(_history(workflow_id, step_id))

    async def start(self, message: str, *, workflow_id: Optional[str] = None,
              agent_id: Optional[str] = None, system_prompt: Optional[str] = None,
              context: Optional[Dict[str, Any]] = None,
              on_busy: Optional[OnBusy] = None) -> ChatRunAccepted:
        """Starts a message in the background: answers at once with the step's ids (HTTP 202)."""
        return await self._t.send(_send(message, workflow_id, agent_id, system_prompt, context, on_busy,
                                  "chat/runs"))

    async def run(self, workflow_id: str, step_id: str) -> ChatRun:
        """The step's run: status, pause, pending, last answer."""
        return await self._t.send(Call("GET", _run_path(workflow_id, step_id)))

    async def resume(self, workflow_id: str, step_id: str, *, pause: Optional[int] = None,
               approval: Optional[Literal["approve", "deny"]] = None,
               connection_id: Optional[str] = None,
               context: Optional[Dict[str, Any]] = None) -> ChatResponse:
        """Resumes a yielded step with what it waits for and waits for its answer; a stale or
        second resume raises AtriumError with status 409."""
        return await self._t.send(_resume(workflow_id, step_id, pause, approval, connection_id, context,
                                    False))

    async def resume_in_background(self, workflow_id: str, step_id: str, *, pause: Optional[int] = None,
                             approval: Optional[Literal["approve", "deny"]] = None,
                             connection_id: Optional[str] = None,
                             context: Optional[Dict[str, Any]] = None) -> ChatRunAccepted:
        """Resumes a yielded step in the background (HTTP 202)."""
        return await self._t.send(_resume(workflow_id, step_id, pause, approval, connection_id, context,
                                    True))

    async def cancel(self, workflow_id: str, step_id: str) -> ChatRun:
        """Stops a queued, running or yielded step on whichever host runs it; the run afterwards."""
        return await self._t.send(Call("POST", _run_path(workflow_id, step_id) + "/cancel"))

    async def waiting(self, *, pending: Optional[str] = None, limit: Optional[int] = None,
                      cursor: Optional[str] = None) -> ChatWaitingPage:
        """As ChatClient.waiting."""
        return await self._t.send(_waiting(pending, limit, cursor))

"""The chat router: run a message on the kernel, follow its trace, read a step's history."""

from __future__ import annotations

from typing import Any, AsyncIterator, Dict, Iterator, List, Mapping, Optional

import httpx

from ._http import Call, segment
from ._transport import AsyncTransport, SyncTransport
from .trace_stream import follow_trace, follow_trace_async
from .types import ChatResponse, TraceEvent


def _send(message: str, workflow_id: Optional[str], agent_id: Optional[str],
          system_prompt: Optional[str], context: Optional[Dict[str, Any]]) -> Call:
    body = {"message": message, "workflow_id": workflow_id, "agent_id": agent_id,
            "system_prompt": system_prompt, "context": context}
    return Call("POST", "chat", body={k: v for k, v in body.items() if v is not None})


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
             context: Optional[Dict[str, Any]] = None) -> ChatResponse:
        """Runs one message on the kernel and waits for the answer. Supply ``workflow_id`` to
        open the trace stream before the answer arrives."""
        return self._t.send(_send(message, workflow_id, agent_id, system_prompt, context))

    def stream(self, workflow_id: str, *, last_event_id: Optional[str] = None,
               max_reconnects: int = 5, reconnect_delay: float = 1.0) -> Iterator[TraceEvent]:
        """Live trace events until a terminal one, resuming with Last-Event-ID after a drop."""
        return follow_trace(self._t.http, self._t.base + _stream_path(workflow_id), self._t.headers,
                            last_event_id=last_event_id, max_reconnects=max_reconnects,
                            reconnect_delay=reconnect_delay)

    def history(self, workflow_id: str, step_id: str) -> List[TraceEvent]:
        return self._t.send(_history(workflow_id, step_id))


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
                   context: Optional[Dict[str, Any]] = None) -> ChatResponse:
        return await self._t.send(_send(message, workflow_id, agent_id, system_prompt, context))

    def stream(self, workflow_id: str, *, last_event_id: Optional[str] = None,
               max_reconnects: int = 5, reconnect_delay: float = 1.0) -> AsyncIterator[TraceEvent]:
        return follow_trace_async(self._t.http, self._t.base + _stream_path(workflow_id),
                                  self._t.headers, last_event_id=last_event_id,
                                  max_reconnects=max_reconnects, reconnect_delay=reconnect_delay)

    async def history(self, workflow_id: str, step_id: str) -> List[TraceEvent]:
        return await self._t.send(_history(workflow_id, step_id))

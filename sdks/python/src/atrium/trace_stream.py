"""Follows a workflow's trace stream until a terminal event. A dropped connection (network error,
5xx, or the body ending early) is reopened with Last-Event-ID, so the server replays exactly what
was missed and nothing twice."""

from __future__ import annotations

import asyncio
import json
import time
from typing import AsyncIterator, Dict, Iterator, Optional

import httpx

from ._http import read_body
from .errors import AtriumError
from .sse import SseParser
from .types import TraceEvent

# After these the server closes the stream; reconnecting would only wait for nothing.
TERMINAL_TYPES = frozenset({"step_complete", "timeout", "error"})


class TraceStreamEnded(Exception):
    """The stream closed before a terminal event, more times in a row than allowed."""


class _Resume:
    """What survives a reconnect: the last event id, the delay, and failures in a row."""

    def __init__(self, last_event_id: Optional[str], max_reconnects: int, delay: float) -> None:
        self.last_event_id = last_event_id
        self.max_reconnects = max_reconnects
        self.delay = delay
        self.failures = 0

    def headers(self, base: Dict[str, str]) -> Dict[str, str]:
        headers = {**base, "accept": "text/event-stream"}
        if self.last_event_id is not None:
            headers["last-event-id"] = self.last_event_id
        return headers

    def failed(self, error: BaseException) -> float:
        """The delay before the next attempt, or raises once the reconnects are used up."""
        self.failures += 1
        if self.failures > self.max_reconnects:
            raise error
        return self.delay

    def events(self, parser: SseParser, text: str) -> Iterator[TraceEvent]:
        for message in parser.feed(text):
            if message.id is not None:
                self.last_event_id = message.id
            self.failures = 0
            yield json.loads(message.data)
        if parser.retry_ms is not None:
            self.delay = parser.retry_ms / 1000


def _refusal(response: httpx.Response) -> AtriumError:
    error = AtriumError(response.status_code, read_body(response))
    if response.status_code < 500:
        raise error
    return error


_STREAM_TIMEOUT = httpx.Timeout(30.0, read=None)


def follow_trace(
    http: httpx.Client,
    url: str,
    headers: Dict[str, str],
    *,
    last_event_id: Optional[str] = None,
    max_reconnects: int = 5,
    reconnect_delay: float = 1.0,
) -> Iterator[TraceEvent]:
    resume = _Resume(last_event_id, max_reconnects, reconnect_delay)
    while True:
        failure: BaseException
        try:
            with http.stream("GET", url, headers=resume.headers(headers), timeout=_STREAM_TIMEOUT) as response:
                if not response.is_success:
                    response.read()
                    failure = _refusal(response)
                else:
                    parser = SseParser()
                    for text in response.iter_text():
                        for event in resume.events(parser, text):
                            yield event
                            if event["type"] in TERMINAL_TYPES:
                                return
                    failure = TraceStreamEnded(f"trace stream {url} ended before a terminal event")
        except httpx.TransportError as error:
            failure = error
        time.sleep(resume.failed(failure))


async def follow_trace_async(
    http: httpx.AsyncClient,
    url: str,
    headers: Dict[str, str],
    *,
    last_event_id: Optional[str] = None,
    max_reconnects: int = 5,
    reconnect_delay: float = 1.0,
) -> AsyncIterator[TraceEvent]:
    resume = _Resume(last_event_id, max_reconnects, reconnect_delay)
    while True:
        failure: BaseException
        try:
            async with http.stream(
                "GET", url, headers=resume.headers(headers), timeout=_STREAM_TIMEOUT
            ) as response:
                if not response.is_success:
                    await response.aread()
                    failure = _refusal(response)
                else:
                    parser = SseParser()
                    async for text in response.aiter_text():
                        for event in resume.events(parser, text):
                            yield event
                            if event["type"] in TERMINAL_TYPES:
                                return
                    failure = TraceStreamEnded(f"trace stream {url} ended before a terminal event")
        except httpx.TransportError as error:
            failure = error
        await asyncio.sleep(resume.failed(failure))

"""An incremental parser for text/event-stream (the WHATWG EventSource rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional


@dataclass(frozen=True)
class SseMessage:
    data: str
    id: Optional[str] = None
    event: Optional[str] = None


class SseParser:
    """Feed decoded text in any chunking; each call returns the messages completed by it."""

    def __init__(self) -> None:
        self._buffer = ""
        self._data: List[str] = []
        self._id: Optional[str] = None
        self._event: Optional[str] = None
        self.retry_ms: Optional[int] = None

    def feed(self, text: str) -> List[SseMessage]:
        self._buffer += text.replace("\r\n", "\n").replace("\r", "\n")
        messages: List[SseMessage] = []
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            message = self._line(line)
            if message is not None:
                messages.append(message)
        return messages

    def _line(self, line: str) -> Optional[SseMessage]:
        if line == "":
            if not self._data:
                self._event = None
                return None
            message = SseMessage("\n".join(self._data), self._id, self._event)
            self._data, self._event = [], None
            return message
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "event":
            self._event = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

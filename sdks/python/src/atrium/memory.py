"""The memory service's REST API (/api/v1); failures raise AtriumError with status and body."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import httpx

from ._http import Call, segment
from ._transport import AsyncTransport, SyncTransport
from .types import (
    AnalyticsTriggerResult,
    CreateSessionResult,
    ForgetResult,
    MemoryContext,
    MemoryHealth,
    SearchResult,
    StoreEventResult,
    StoreInteractionResult,
)


def _headers(api_key: Optional[str], jwt: Optional[str]) -> Dict[str, str]:
    headers = {}
    if api_key:
        headers["x-api-key"] = api_key
    if jwt:
        headers["x-jwt-token"] = jwt
    return headers


def _body(**fields: Any) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def _session(session_id: str, rest: str = "") -> str:
    return f"api/v1/sessions/{segment(session_id)}{rest}"


class _Calls:
    @staticmethod
    def create_session(tenant_id: str, user_id: str, agent_id: Optional[str],
                       metadata: Optional[Dict[str, str]]) -> Call:
        return Call("POST", "api/v1/sessions", body=_body(
            tenant_id=tenant_id, user_id=user_id, agent_id=agent_id, metadata=metadata))

    @staticmethod
    def store_interaction(session_id: str, body: Dict[str, Any],
                          idempotency_key: Optional[str]) -> Call:
        return Call("POST", _session(session_id, "/interactions"), body=body,
                    headers=_idempotency(idempotency_key))

    @staticmethod
    def store_event(session_id: str, body: Dict[str, Any], idempotency_key: Optional[str]) -> Call:
        return Call("POST", _session(session_id, "/events"), body=body,
                    headers=_idempotency(idempotency_key))

    @staticmethod
    def get_context(session_id: str, limit: Optional[int], query: Optional[str]) -> Call:
        return Call("GET", _session(session_id, "/context"), {"limit": limit, "query": query})

    @staticmethod
    def search(session_id: str, body: Dict[str, Any]) -> Call:
        return Call("POST", _session(session_id, "/context/search"), body=body, unwrap="results")

    @staticmethod
    def forget(session_id: str, event_ids: Optional[List[str]], scope: Optional[str]) -> Call:
        if (event_ids is None) == (scope is None):
            raise ValueError("forget needs exactly one of event_ids or scope ('agent' or 'user')")
        return Call("POST", _session(session_id, "/forget"),
                    body=_body(event_ids=event_ids, scope=scope))


def _idempotency(key: Optional[str]) -> Dict[str, str]:
    return {"Idempotency-Key": key} if key else {}


_HEALTH = Call("GET", "api/v1/health")
_ANALYTICS = Call("POST", "api/v1/admin/analytics/trigger", body={})


class MemoryClient:
    """``MemoryClient("http://127.0.0.1:8080")``; ``api_key`` goes out as X-API-Key and ``jwt`` as
    X-JWT-Token when the service has those on."""

    def __init__(self, url: str, *, api_key: Optional[str] = None, jwt: Optional[str] = None,
                 http: Optional[httpx.Client] = None, timeout: float = 30.0) -> None:
        self._t = SyncTransport(url, _headers(api_key, jwt), http, timeout)

    def __enter__(self) -> "MemoryClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._t.close()

    def create_session(self, tenant_id: str, user_id: str, *, agent_id: Optional[str] = None,
                       metadata: Optional[Dict[str, str]] = None) -> CreateSessionResult:
        return self._t.send(_Calls.create_session(tenant_id, user_id, agent_id, metadata))

    def store_interaction(self, session_id: str, user_message: str, *,
                          agent_response: Optional[str] = None,
                          metadata: Optional[Dict[str, str]] = None,
                          timestamp: Optional[str] = None,
                          idempotency_key: Optional[str] = None,
                          agent_response_source: Optional[str] = None) -> StoreInteractionResult:
        """``idempotency_key``: a retry with the same key (within a day) returns the first result
        and stores nothing twice. ``agent_response_source``: ``agent`` (default), ``tool``, or
        ``memory`` when the reply quotes memory back (then no search quotes it as evidence)."""
        return self._t.send(_Calls.store_interaction(session_id, _body(
            user_message=user_message, agent_response=agent_response, metadata=metadata,
            timestamp=timestamp, agent_response_source=agent_response_source), idempotency_key))

    def store_event(self, session_id: str, type: str, *, role: Optional[str] = None,
                    content: Optional[str] = None, metadata: Optional[Dict[str, str]] = None,
                    timestamp: Optional[str] = None, payload: Optional[str] = None,
                    mime_type: Optional[str] = None,
                    idempotency_key: Optional[str] = None,
                    source: Optional[str] = None) -> StoreEventResult:
        """``type``: message, thought, action or observation; ``payload`` is base64.
        ``source``: where ``content`` came from (user, agent, system, tool or memory; default the
        role)."""
        return self._t.send(_Calls.store_event(session_id, _body(
            type=type, role=role, content=content, metadata=metadata, timestamp=timestamp,
            payload=payload, mime_type=mime_type, source=source), idempotency_key))

    def get_context(self, session_id: str, *, limit: Optional[int] = None,
                    query: Optional[str] = None) -> MemoryContext:
        """``query`` chooses dialogue pages by semantic search instead of recency."""
        return self._t.send(_Calls.get_context(session_id, limit, query))

    def search(self, session_id: str, query: str, *, limit: Optional[int] = None,
               similarity_threshold: Optional[float] = None,
               filter: Optional[Dict[str, str]] = None) -> List[SearchResult]:
        return self._t.send(_Calls.search(session_id, _body(
            query=query, limit=limit, similarity_threshold=similarity_threshold, filter=filter)))

    def forget(self, session_id: str, *, event_ids: Optional[List[str]] = None,
               scope: Optional[str] = None) -> ForgetResult:
        """Erases the given events, or the session's ``"agent"`` or ``"user"`` scope, for good."""
        return self._t.send(_Calls.forget(session_id, event_ids, scope))

    def health(self) -> MemoryHealth:
        return self._t.send(_HEALTH)

    def trigger_graph_analytics(self) -> AnalyticsTriggerResult:
        return self._t.send(_ANALYTICS)


class AsyncMemoryClient:
    """The async twin of MemoryClient."""

    def __init__(self, url: str, *, api_key: Optional[str] = None, jwt: Optional[str] = None,
                 http: Optional[httpx.AsyncClient] = None, timeout: float = 30.0) -> None:
        self._t = AsyncTransport(url, _headers(api_key, jwt), http, timeout)

    async def __aenter__(self) -> "AsyncMemoryClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._t.aclose()

    async def create_session(self, tenant_id: str, user_id: str, *, agent_id: Optional[str] = None,
                             metadata: Optional[Dict[str, str]] = None) -> CreateSessionResult:
        return await self._t.send(_Calls.create_session(tenant_id, user_id, agent_id, metadata))

    async def store_interaction(self, session_id: str, user_message: str, *,
                                agent_response: Optional[str] = None,
                                metadata: Optional[Dict[str, str]] = None,
                                timestamp: Optional[str] = None,
                                idempotency_key: Optional[str] = None,
                                agent_response_source: Optional[str] = None,
                                ) -> StoreInteractionResult:
        return await self._t.send(_Calls.store_interaction(session_id, _body(
            user_message=user_message, agent_response=agent_response, metadata=metadata,
            timestamp=timestamp, agent_response_source=agent_response_source), idempotency_key))

    async def store_event(self, session_id: str, type: str, *, role: Optional[str] = None,
                          content: Optional[str] = None, metadata: Optional[Dict[str, str]] = None,
                          timestamp: Optional[str] = None, payload: Optional[str] = None,
                          mime_type: Optional[str] = None,
                          idempotency_key: Optional[str] = None,
                          source: Optional[str] = None) -> StoreEventResult:
        return await self._t.send(_Calls.store_event(session_id, _body(
            type=type, role=role, content=content, metadata=metadata, timestamp=timestamp,
            payload=payload, mime_type=mime_type, source=source), idempotency_key))

    async def get_context(self, session_id: str, *, limit: Optional[int] = None,
                          query: Optional[str] = None) -> MemoryContext:
        return await self._t.send(_Calls.get_context(session_id, limit, query))

    async def search(self, session_id: str, query: str, *, limit: Optional[int] = None,
                     similarity_threshold: Optional[float] = None,
                     filter: Optional[Dict[str, str]] = None) -> List[SearchResult]:
        return await self._t.send(_Calls.search(session_id, _body(
            query=query, limit=limit, similarity_threshold=similarity_threshold, filter=filter)))

    async def forget(self, session_id: str, *, event_ids: Optional[List[str]] = None,
                     scope: Optional[str] = None) -> ForgetResult:
        return await self._t.send(_Calls.forget(session_id, event_ids, scope))

    async def health(self) -> MemoryHealth:
        return await self._t.send(_HEALTH)

    async def trigger_graph_analytics(self) -> AnalyticsTriggerResult:
        return await self._t.send(_ANALYTICS)

"""A gRPC client interceptor that puts a connection's credential into every call's metadata.

Needs grpcio (``pip install atrium-sdk[grpc]``; Debian: python3-grpcio)::

    channel = grpc.intercept_channel(
        grpc.secure_channel(target, grpc.ssl_channel_credentials()),
        CredentialInterceptor(gateway, connection_id),
    )
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Callable, Optional, Tuple

import grpc

from .gateway import GatewayClient
from .strategies.inject import OutgoingRequest, apply_credential, resolve_strategy
from .types import CredentialStrategy

# Strategies that live in headers; the signing ones sign an HTTP body gRPC frames differently.
_METADATA_STRATEGIES = {"oauth2", "api_key", "basic_auth"}


class _CallDetails(
    namedtuple(
        "_CallDetails",
        ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression"),
    ),
    grpc.ClientCallDetails,
):
    pass


class CredentialInterceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Injects the credential, fresh from the gateway client's token cache, into each call. When a
    call of an oauth2 connection answers UNAUTHENTICATED, the connection is refreshed through the
    gateway and the call sent once more; a server-streaming call only when the refusal came before
    its first message (after that, the caller already holds part of the answer). A revoked or
    attention-required connection raises ConnectionRevoked / AttentionRequired before any call."""

    def __init__(
        self,
        gateway: GatewayClient,
        connection_id: str,
        *,
        workspace_id: Optional[str] = None,
        strategy: Optional[CredentialStrategy] = None,
    ) -> None:
        self._gateway = gateway
        self._connection_id = connection_id
        self._workspace_id = workspace_id
        self._strategy = strategy

    def _with_credential(
        self, details: grpc.ClientCallDetails, bypass_cache: bool
    ) -> Tuple[_CallDetails, str]:
        token = self._gateway.get_token(
            self._connection_id, workspace_id=self._workspace_id, bypass_cache=bypass_cache
        )
        strategy = resolve_strategy(token, self._strategy)
        kind = strategy.get("type", "")
        if kind not in _METADATA_STRATEGIES:
            raise ValueError(f"{kind} credentials cannot be sent as gRPC metadata")
        injected = apply_credential(OutgoingRequest("POST", "http://grpc.invalid/", {}), token, strategy)
        names = set(injected.headers)
        metadata = [(k, v) for k, v in (details.metadata or []) if k not in names]
        metadata += sorted(injected.headers.items())
        return (
            _CallDetails(
                details.method,
                details.timeout,
                metadata,
                details.credentials,
                getattr(details, "wait_for_ready", None),
                getattr(details, "compression", None),
            ),
            kind,
        )

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request: Any
    ) -> Any:
        details, kind = self._with_credential(client_call_details, False)
        outcome = continuation(details, request)
        if kind != "oauth2" or outcome.code() != grpc.StatusCode.UNAUTHENTICATED:
            return outcome
        self._gateway.refresh_connection(self._connection_id, workspace_id=self._workspace_id)
        details, _ = self._with_credential(client_call_details, True)
        return continuation(details, request)

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request: Any
    ) -> Any:
        details, kind = self._with_credential(client_call_details, False)
        call = continuation(details, request)
        if kind != "oauth2":
            return call

        def again() -> Any:
            self._gateway.refresh_connection(self._connection_id, workspace_id=self._workspace_id)
            fresh, _ = self._with_credential(client_call_details, True)
            return continuation(fresh, request)

        return _RetryBeforeFirstMessage(call, again)


class _RetryBeforeFirstMessage:
    """A server stream that, refused with UNAUTHENTICATED before its first message, is replaced once
    by the call ``again`` makes; otherwise the call itself (iteration and the Call methods)."""

    def __init__(self, call: Any, again: Callable[[], Any]) -> None:
        self._call = call
        self._again: Optional[Callable[[], Any]] = again

    def __iter__(self) -> "_RetryBeforeFirstMessage":
        return self

    def __next__(self) -> Any:
        try:
            message = next(self._call)
        except grpc.RpcError as error:
            again, self._again = self._again, None
            if again is None or error.code() != grpc.StatusCode.UNAUTHENTICATED:
                raise
            self._call = again()
            return next(self._call)
        self._again = None
        return message

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)

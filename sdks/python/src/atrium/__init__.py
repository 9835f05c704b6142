"""Atrium's Python SDK: gateway credentials with injection, the memory service and chat."""

from ._version import __version__
from .auth import AsyncConnectionAuth, ConnectionAuth
from .chat import AsyncChatClient, ChatClient
from .errors import (
    AtriumError,
    AttentionRequired,
    ConnectionNotActive,
    ConnectionRevoked,
    CredentialError,
    GatewayError,
)
from .gateway import GatewayClient
from .gateway_async import AsyncGatewayClient
from .memory import AsyncMemoryClient, MemoryClient
from .strategies import (
    AwsCredentials,
    OutgoingRequest,
    apply_credential,
    inject_credential,
    resolve_strategy,
    sign_sigv4,
)
from .token_cache import TokenCache
from .trace_stream import TraceStreamEnded
from .webhooks import WebhookEvent, WebhookVerificationError, verify_webhook

__all__ = [
    "AsyncChatClient",
    "AsyncConnectionAuth",
    "AsyncGatewayClient",
    "AsyncMemoryClient",
    "AtriumError",
    "AttentionRequired",
    "AwsCredentials",
    "ChatClient",
    "ConnectionAuth",
    "ConnectionNotActive",
    "ConnectionRevoked",
    "CredentialError",
    "GatewayClient",
    "GatewayError",
    "MemoryClient",
    "OutgoingRequest",
    "TokenCache",
    "TraceStreamEnded",
    "WebhookEvent",
    "WebhookVerificationError",
    "__version__",
    "apply_credential",
    "inject_credential",
    "resolve_strategy",
    "sign_sigv4",
    "verify_webhook",
]

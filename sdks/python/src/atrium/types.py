"""Bodies of the Atrium APIs exactly as they travel (proto field names, RFC 3339 times)."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, NotRequired, TypedDict

StrategyType = Literal["oauth2", "api_key", "basic_auth", "query_param", "hmac_payload", "aws_sigv4"]


class CredentialStrategy(TypedDict, total=False):
    """How a credential goes into an outgoing request; the gateway derives it from the provider."""

    type: StrategyType
    header_name: str
    header_prefix: str
    param_name: str
    region: str
    service: str


class ConnectionToken(TypedDict, total=False):
    connection_id: str
    auth_type: str
    status: str
    health_status: str
    access_token: str
    token_type: str
    expires_at: str
    scopes: List[str]
    id_token: str
    api_key: str
    username: str
    password: str
    name_id: str
    attributes: Dict[str, str]
    strategy: CredentialStrategy


class Connection(TypedDict, total=False):
    id: str
    workspace_id: str
    provider_id: str
    provider_name: str
    auth_type: str
    status: str
    health_status: str
    scopes: List[str]
    expires_at: str
    last_refreshed_at: str
    created_at: str
    updated_at: str
    revoked_at: str
    subject: str


class RefreshResult(TypedDict, total=False):
    connection_id: str
    status: str
    health_status: str
    expires_at: str
    refreshed_at: str


class RevocationResult(TypedDict, total=False):
    connection_id: str
    token_deleted: bool
    provider_revoked: bool
    provider_revocation_error: str
    revoked_at: str
    reason: str


class StartConnectionResult(TypedDict, total=False):
    authorization_url: str
    state: str
    expires_at: str


class CaptureField(TypedDict):
    name: str
    secret: bool
    required: bool


class CaptureSchema(TypedDict, total=False):
    provider_id: str
    auth_type: str
    fields: List[CaptureField]
    validatable: bool


class Agent(TypedDict, total=False):
    id: str
    workspace_id: str
    name: str
    description: str
    metadata: Dict[str, str]
    created_at: str
    disabled_at: str


class AgentSession(TypedDict, total=False):
    id: str
    agent_id: str
    connection_id: str
    workspace_id: str
    status: str
    created_at: str
    closed_at: str
    close_reason: str


class Webhook(TypedDict, total=False):
    """A webhook subscription; ``secret`` is set only in the answer of ``create_webhook`` (when the
    secret was generated) and of ``rotate_webhook_secret``."""

    id: str
    name: str
    url: str
    event_types: List[str]
    enabled: bool
    description: str
    secret_fingerprint: str
    secret: str
    created_at: str
    updated_at: str
    previous_secret_expires_at: str


class DeleteWebhookResult(TypedDict):
    id: str
    deleted: bool


class WebhookAttempt(TypedDict, total=False):
    attempt: int
    status_code: int
    error: str
    duration_ms: int
    attempted_at: str


class WebhookDelivery(TypedDict, total=False):
    """One event for one subscription; ``id`` is the ``webhook-id`` header, the same on every retry."""

    id: str
    webhook_id: str
    event_type: str
    status: str
    attempt_count: int
    next_attempt_at: str
    last_error: str
    created_at: str
    delivered_at: str
    payload: str
    attempts: List[WebhookAttempt]


class CreateSessionResult(TypedDict):
    session_id: str
    created_at: str


class StoreInteractionResult(TypedDict):
    success: bool
    interaction_id: str


class StoreEventResult(TypedDict):
    success: bool
    event_id: str


class MemoryContext(TypedDict, total=False):
    stm_events: List[Dict[str, Any]]
    relevant_pages: List[Dict[str, Any]]
    segments: List[Any]
    user_persona: Any
    ltpm: Dict[str, str]


class SearchResult(TypedDict, total=False):
    content: str
    similarity_score: float
    source_type: str
    source_id: str
    timestamp: str


class MemoryHealth(TypedDict, total=False):
    status: str
    dependencies: Dict[str, str]
    timestamp: str


class AnalyticsTriggerResult(TypedDict):
    success: bool
    message: str


class ForgetResult(TypedDict):
    """What Forget erased; ``erasure_id`` names its audit record."""

    success: bool
    erasure_id: str
    events_erased: int
    chains_erased: int
    chains_rebuilt: int
    entities_erased: int
    payloads_erased: int


class ChatResponse(TypedDict, total=False):
    workflow_id: str
    step_id: str
    status: Literal["success", "failure", "yield"]
    answer: str
    sources: List[Dict[str, str]]
    tokens: Dict[str, int]
    elapsed_ms: float
    # On "yield": what the step waits for, each {"kind": "credentials" | "approval", "detail": ...}
    # or {"kind": "consent", "provider": ..., "authorization_url": ..., "detail": ...}.
    pending: List[Dict[str, str]]


class ChatRunAccepted(TypedDict):
    """The answer of a background start or resume (HTTP 202)."""

    workflow_id: str
    step_id: str
    status: Literal["queued", "running", "yielded", "completed", "failed", "cancelled"]


class ChatRun(ChatRunAccepted, total=False):
    """A step's run as ``GET /chat/runs/{workflow_id}/{step_id}`` shows it."""

    # How many times the step paused; a resume may name the pause it answers.
    pause: int
    # When yielded: what the step waits for.
    pending: List[Dict[str, str]]
    # Why it failed or was cancelled.
    reason: str
    # The step's last answer (at its end or last pause): status, answer, sources, tokens, pending.
    response: Dict[str, Any]
    host: Optional[str]
    cancel_requested: bool
    lease_expires_at: str
    created_at: str
    updated_at: str


class ChatWaitingStep(TypedDict):
    """A step waiting for a person or a setting, as ``GET /chat/runs?status=yielded`` lists it."""

    workflow_id: str
    step_id: str
    # The pause a resume of this step names.
    pause: int
    # What it waits for, each {"kind": "approval" | "credentials" | "consent", "detail": ...}; a
    # consent item also names "provider" and the "authorization_url" a person opens.
    pending: List[Dict[str, str]]
    # The step's answer at the pause: what it would act on once approved.
    draft: str
    message: str
    # user_id, session_id (when known), agent_id, workflow_id.
    asked_by: Dict[str, str]
    asked_at: str
    created_at: str


class ChatWaitingPage(TypedDict):
    """A page of waiting steps, newest pause first; ``next_cursor`` when the page is full."""

    runs: List[ChatWaitingStep]
    next_cursor: NotRequired[str]


class TraceEvent(TypedDict):
    workflow_id: str
    step_id: str
    type: str
    timestamp: str
    data: Dict[str, Any]
    seq: NotRequired[int]

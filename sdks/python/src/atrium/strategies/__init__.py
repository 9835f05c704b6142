from .hmac_payload import sign_payload
from .inject import (
    OutgoingRequest,
    apply_credential,
    inject_credential,
    resolve_strategy,
)
from .sigv4 import AwsCredentials, sign_sigv4

__all__ = [
    "AwsCredentials",
    "OutgoingRequest",
    "apply_credential",
    "inject_credential",
    "resolve_strategy",
    "sign_payload",
    "sign_sigv4",
]

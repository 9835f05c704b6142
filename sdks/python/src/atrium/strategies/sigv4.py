"""AWS Signature Version 4, canonicalised as the AWS SDK for JavaScript's signer does, so the
Python, Go and TypeScript SDKs send identical signatures (see sdks/conformance/injection.json)."""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Dict, List, Optional
from urllib.parse import parse_qsl, quote, urlsplit

# Headers a proxy or the transport may change or drop: never part of the signature.
_UNSIGNABLE = {
    "authorization",
    "cache-control",
    "connection",
    "content-length",
    "expect",
    "from",
    "keep-alive",
    "max-forwards",
    "pragma",
    "referer",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "x-amzn-trace-id",
}


@dataclass(frozen=True)
class AwsCredentials:
    access_key_id: str
    secret_access_key: str
    session_token: Optional[str] = None


def sign_sigv4(
    method: str,
    url: str,
    headers: Dict[str, str],
    body: bytes,
    *,
    region: str,
    service: str,
    credentials: AwsCredentials,
    signing_date: Optional[datetime] = None,
    content_sha256_header: bool = True,
) -> Dict[str, str]:
    """The headers to send (lowercase names, without Host): ``headers`` plus x-amz-date,
    x-amz-content-sha256 (unless disabled, as in AWS's own test suite) and authorization."""
    when = (signing_date or datetime.now(timezone.utc)).astimezone(timezone.utc)
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    parts = urlsplit(url)
    payload_hash = hashlib.sha256(body).hexdigest()

    out = {name.lower(): value for name, value in headers.items() if name.lower() != "host"}
    out["x-amz-date"] = amz_date
    if credentials.session_token:
        out["x-amz-security-token"] = credentials.session_token
    if content_sha256_header:
        out["x-amz-content-sha256"] = payload_hash

    signed = {name: value for name, value in out.items() if _signable(name)}
    signed["host"] = parts.netloc
    names = sorted(signed)
    canonical_headers = "".join(f"{n}:{_trim(signed[n])}\n" for n in names)
    signed_headers = ";".join(names)
    canonical_request = "\n".join(
        [
            method.upper(),
            _canonical_path(parts.path or "/"),
            _canonical_query(parts.query),
            canonical_headers,
            signed_headers,
            payload_hash,
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()]
    )
    key = _hmac(("AWS4" + credentials.secret_access_key).encode(), day)
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    out["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={credentials.access_key_id}/{scope}, "
        f"SignedHeaders={signed_headers}, Signature={signature}"
    )
    return out


def _signable(name: str) -> bool:
    return name not in _UNSIGNABLE and not name.startswith(("proxy-", "sec-"))


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode(), hashlib.sha256).digest()


def _escape(text: str) -> str:
    return quote(text, safe="-_.~")


def _trim(value: str) -> str:
    return re.sub(r"\s+", " ", value.strip())


def _canonical_path(path: str) -> str:
    # Every service but S3 signs the normalised, once more percent-encoded path.
    segments: List[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if segments:
                segments.pop()
        else:
            segments.append(segment)
    normalised = ("/" if path.startswith("/") else "") + "/".join(segments)
    if segments and path.endswith("/"):
        normalised += "/"
    return quote(normalised, safe="/-_.~")


def _canonical_query(query: str) -> str:
    pairs: Dict[str, List[str]] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name.lower() == "x-amz-signature":
            continue
        pairs.setdefault(_escape(name), []).append(_escape(value))
    encoded: List[str] = []
    for name in sorted(pairs):
        encoded.extend(sorted(f"{name}={value}" for value in pairs[name]))
    return "&".join(encoded)

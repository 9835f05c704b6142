"""Signature Version 4 against AWS's published test-suite vectors (get-vanilla and
get-vanilla-query-order-key-case), which sign without x-amz-content-sha256."""

from datetime import datetime, timezone

import pytest

from atrium.strategies.sigv4 import AwsCredentials, sign_sigv4

CREDENTIALS = AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
WHEN = datetime(2015, 8, 30, 12, 36, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "url, signature",
    [
        (
            "https://example.amazonaws.com/",
            "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ),
        (
            "https://example.amazonaws.com/?Param2=value2&Param1=value1",
            "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
        ),
    ],
)
def test_aws_published_vectors(url: str, signature: str) -> None:
    headers = sign_sigv4(
        "GET",
        url,
        {},
        b"",
        region="us-east-1",
        service="service",
        credentials=CREDENTIALS,
        signing_date=WHEN,
        content_sha256_header=False,
    )
    assert headers == {
        "x-amz-date": "20150830T123600Z",
        "authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
        f"aws4_request, SignedHeaders=host;x-amz-date, Signature={signature}",
    }


def test_session_token_is_sent_and_signed() -> None:
    headers = sign_sigv4(
        "GET",
        "https://example.amazonaws.com/",
        {},
        b"",
        region="us-east-1",
        service="service",
        credentials=AwsCredentials("AKIDEXAMPLE", "secret", "session-1"),
        signing_date=WHEN,
    )
    assert headers["x-amz-security-token"] == "session-1"
    assert "x-amz-security-token" in headers["authorization"].split("SignedHeaders=")[1]

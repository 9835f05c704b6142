"""verify_webhook against the vector the broker, TypeScript and Go tests share, and the Standard
Webhooks specification's example."""

import pytest

from atrium import WebhookVerificationError, verify_webhook

SECRET = "whsec_BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc="
BODY = (
    '{"type":"connection.revoked","timestamp":"2023-11-14T22:13:20.000Z",'
    '"data":{"connection_id":"c1"}}'
)
SIGNATURE = "v1,UOc9NW+9Rk+2njgTEut4NgEMKFBlf3kCGxMAWadfxQ4="
NOW = 1700000000


def headers(signature=SIGNATURE, timestamp="1700000000"):
    return {
        "Webhook-Id": "msg_atrium_vector",
        "Webhook-Timestamp": timestamp,
        "Webhook-Signature": signature,
    }


def test_shared_vector():
    event = verify_webhook(SECRET, headers(), BODY, now=NOW)
    assert event.id == "msg_atrium_vector"
    assert event.type == "connection.revoked"
    assert event.timestamp == "2023-11-14T22:13:20.000Z"
    assert event.data == {"connection_id": "c1"}


def test_specification_example_from_bytes():
    event = verify_webhook(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        {
            "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
            "webhook-timestamp": "1614265330",
            "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
        },
        b'{"test": 2432232314}',
        now=1614265330,
    )
    assert event.id == "msg_p5jXN8AQM9LWM0D4loKWxJek"


def test_one_of_several_signatures():
    several = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v1a,xyz " + SIGNATURE
    verify_webhook(SECRET, headers(several), BODY, now=NOW)


def test_tolerance_is_five_minutes_either_way():
    verify_webhook(SECRET, headers(), BODY, now=NOW + 300)
    verify_webhook(SECRET, headers(), BODY, now=NOW - 300)
    verify_webhook(SECRET, headers(), BODY, now=NOW + 900, tolerance_seconds=900)
    for when in (NOW + 301, NOW - 301):
        with pytest.raises(WebhookVerificationError, match="tolerance"):
            verify_webhook(SECRET, headers(), BODY, now=when)


@pytest.mark.parametrize(
    "secret, hdrs, body, message",
    [
        (SECRET, headers(), BODY.replace("c1", "c2"), "no webhook-signature"),
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", headers(), BODY, "no webhook-signature"),
        (SECRET, headers("v2,abc"), BODY, "no webhook-signature"),
        (SECRET, {"webhook-id": "x"}, BODY, "required"),
        ("whsec_!!", headers(), BODY, "secret"),
    ],
)
def test_rejections(secret, hdrs, body, message):
    with pytest.raises(WebhookVerificationError, match=message):
        verify_webhook(secret, hdrs, body, now=NOW)

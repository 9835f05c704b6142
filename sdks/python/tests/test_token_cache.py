from atrium import TokenCache


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


NOON = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def token(expires_at: str = "") -> dict:
    return {"connection_id": "c", "access_token": "at", **({"expires_at": expires_at} if expires_at else {})}


def test_expiry_is_honoured_early_by_the_skew() -> None:
    clock = Clock(NOON)
    cache = TokenCache(expiry_skew=30, clock=clock)
    cache.set("k", token("2023-11-14T22:14:20Z"))  # expires in 60 s
    clock.now = NOON + 29
    assert cache.get("k") is not None
    clock.now = NOON + 30
    assert cache.get("k") is None


def test_static_credentials_live_for_the_static_ttl() -> None:
    clock = Clock(NOON)
    cache = TokenCache(static_ttl=60, clock=clock)
    cache.set("k", token())
    clock.now = NOON + 59.9
    assert cache.get("k") is not None
    clock.now = NOON + 60
    assert cache.get("k") is None


def test_a_token_inside_the_skew_is_not_cached() -> None:
    cache = TokenCache(expiry_skew=30, clock=Clock(NOON))
    cache.set("k", token("2023-11-14T22:13:40Z"))  # expires in 20 s
    assert cache.get("k") is None


def test_nanosecond_timestamps_and_offsets_parse() -> None:
    clock = Clock(NOON)
    cache = TokenCache(expiry_skew=0, clock=clock)
    cache.set("k", token("2023-11-14T23:14:20.123456789+01:00"))
    clock.now = NOON + 60.1
    assert cache.get("k") is not None
    clock.now = NOON + 60.2
    assert cache.get("k") is None


def test_delete_and_clear() -> None:
    cache = TokenCache(clock=Clock(NOON))
    cache.set("a", token())
    cache.set("b", token())
    cache.delete("a")
    assert cache.get("a") is None and cache.get("b") is not None
    cache.clear()
    assert cache.get("b") is None

"""gateway.py is generated from gateway_async.py (scripts/unasync.py) and must be current."""

import importlib.util
import inspect
from pathlib import Path

from atrium import AsyncGatewayClient, GatewayClient

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "unasync.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("unasync", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_sync_gateway_client_is_what_the_generator_writes() -> None:
    unasync = load_generator()
    expected = unasync.generate(unasync.SOURCE.read_text(encoding="utf-8"))
    assert unasync.TARGET.read_text(encoding="utf-8") == expected, (
        "src/atrium/gateway.py is out of date: run python3 sdks/python/scripts/unasync.py"
    )


def test_the_generator_refuses_an_async_part_it_cannot_translate() -> None:
    unasync = load_generator()
    try:
        unasync.generate("import asyncio\n\nasyncio.sleep(1)\n")
    except ValueError as error:
        assert "asyncio" in str(error)
    else:
        raise AssertionError("an untranslated asyncio must fail the generation")


def test_both_clients_offer_the_same_methods_with_the_same_parameters() -> None:
    def surface(cls: type) -> dict:
        return {
            name: list(inspect.signature(member).parameters)
            for name, member in vars(cls).items()
            if callable(member) and not name.startswith("_")
        }

    sync, async_ = surface(GatewayClient), surface(AsyncGatewayClient)
    assert sync.pop("close") == async_.pop("aclose")
    assert sync == async_
    for name in async_:
        assert inspect.iscoroutinefunction(getattr(AsyncGatewayClient, name)) == (name != "auth")

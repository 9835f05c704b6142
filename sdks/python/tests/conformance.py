"""Runs the cases of sdks/conformance/services.json: '$name.field' references, subset matching of
results, and errors by SDK-neutral name (the Go and TypeScript SDKs run the same file)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, Optional

from atrium import (
    AtriumError,
    AttentionRequired,
    ConnectionNotActive,
    ConnectionRevoked,
    GatewayError,
)

CASES = json.loads(
    (Path(__file__).resolve().parents[2] / "conformance" / "services.json").read_text()
)["cases"]

ERRORS = {
    "AtriumError": AtriumError,
    "GatewayError": GatewayError,
    "AttentionRequired": AttentionRequired,
    "ConnectionRevoked": ConnectionRevoked,
    "ConnectionNotActive": ConnectionNotActive,
}


def resolve(value: Any, names: Dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        found: Any = names
        for part in value[1:].split("."):
            found = found[int(part)] if isinstance(found, list) else found[part]
        return found
    if isinstance(value, dict):
        return {k: resolve(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, names) for v in value]
    return value


def contains(actual: Any, expected: Any, path: str = "result") -> Optional[str]:
    """Why ``actual`` does not contain ``expected``, or None when it does."""
    if expected == "<any>":
        return None if actual not in (None, "", [], {}) else f"{path} is empty"
    if expected == "<none>":
        return None if actual in (None, "") else f"{path} is {actual!r}, want none"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path} is {actual!r}, not an object"
        for key, value in expected.items():
            problem = contains(actual.get(key), value, f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path} is {actual!r}, want {len(expected)} items"
        for i, (a, e) in enumerate(zip(actual, expected)):
            problem = contains(a, e, f"{path}[{i}]")
            if problem:
                return problem
        return None
    return None if actual == expected else f"{path} is {actual!r}, want {expected!r}"


def check_step(step: Dict[str, Any], names: Dict[str, Any], result: Any, error: Optional[AtriumError]) -> None:
    """Checks one step's outcome against its expectation and saves its result."""
    where = f"{step['call']} {step.get('args', {})}"
    expect = resolve(step["expect"], names)
    if error is not None:
        assert "error" in expect, f"{where}: unexpected {error!r} {error.body}"
        assert type(error) is ERRORS[expect["error"]], f"{where}: {type(error).__name__}"
        assert error.status == expect["status"], f"{where}: status {error.status}"
        problem = contains(error.body, expect.get("body", {}), "body")
        assert problem is None, f"{where}: {problem}"
        return
    assert "error" not in expect, f"{where}: expected {expect['error']}, got {result!r}"
    if "length" in expect:
        assert len(result) == expect["length"], f"{where}: {len(result)} items"
    if "result" in expect:
        problem = contains(result, expect["result"])
        assert problem is None, f"{where}: {problem}"
    if "save" in step:
        names[step["save"]] = result


def run_case(case: Dict[str, Any], names: Dict[str, Any], call: Callable[[str, Dict[str, Any]], Any]) -> None:
    for step in case["steps"]:
        try:
            result, error = call(step["call"], resolve(step.get("args", {}), names)), None
        except AtriumError as raised:
            result, error = None, raised
        check_step(step, names, result, error)


async def run_case_async(
    case: Dict[str, Any], names: Dict[str, Any], call: Callable[[str, Dict[str, Any]], Awaitable[Any]]
) -> None:
    for step in case["steps"]:
        try:
            result, error = await call(step["call"], resolve(step.get("args", {}), names)), None
        except AtriumError as raised:
            result, error = None, raised
        check_step(step, names, result, error)


def renamed(case: Dict[str, Any], tag: str) -> Dict[str, Any]:
    """The case with its own workspaces, agent names, users and workflows, to run again on one fixture."""
    text = json.dumps(case)
    text = re.sub(r'"(ws-[^"]*|conformance-agent|u-conformance)"', rf'"\1-{tag}"', text)
    text = text.replace('"chat_c0ffee', f'"chat_{tag[:6]:0<6}')
    return json.loads(text)

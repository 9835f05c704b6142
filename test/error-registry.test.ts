import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { type FixedError, type FixedErrorSpec, fixedErrors, restError } from "@atrium/kit";
import * as sdk from "@atrium/sdk";

/**
 * The SDKs' typed errors and the conformance vectors are held to kit's registry of fixed errors
 * (fixed-errors.ts): an SDK that lacks, misnames or mis-maps one fails here, in any of the three
 * languages, and so does an SDK mapping that names no registry error.
 */

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");

const typed = fixedErrors
  .map((fixed) => fixed as unknown as FixedError<string>)
  .filter((fixed) => fixed.spec.sdkName !== undefined);
const specs: FixedErrorSpec<string>[] = typed.map((fixed) => fixed.spec);

/** A mapping an SDK makes from a status and a body's reason to an error class. */
interface Mapping {
  status: number;
  reason: string;
  className: string;
}

const expected = (suffix: string): Mapping[] =>
  specs
    .map((spec) => ({
      status: spec.httpStatus,
      reason: spec.reason,
      className: `${spec.sdkName}${suffix}`,
    }))
    .sort((a, b) => a.reason.localeCompare(b.reason));

function mappings(source: string, pattern: RegExp): Mapping[] {
  return [...source.matchAll(pattern)]
    .map((match) => ({
      status: Number(match[1]),
      reason: String(match[2]),
      className: String(match[3]),
    }))
    .sort((a, b) => a.reason.localeCompare(b.reason));
}

test("the registry names an SDK class for the connection errors the SDKs type", () => {
  assert.deepEqual(
    specs.map((spec) => spec.reason),
    ["attention_required", "connection_revoked", "connection_not_active"],
  );
});

test("TypeScript SDK: each registry error's REST answer becomes its class, and no other", () => {
  for (const fixed of typed) {
    const params = Object.fromEntries(fixed.spec.params.map((name) => [name, "c-1"]));
    const { status, body } = restError(fixed(params));
    const error = sdk.gatewayErrorFor(status, body, "c-1");
    const expectedClass = (sdk as Record<string, unknown>)[`${fixed.spec.sdkName}Error`];
    assert.ok(expectedClass, `@atrium/sdk exports ${fixed.spec.sdkName}Error`);
    assert.equal(error.constructor, expectedClass, fixed.spec.reason);
    assert.equal(error.code, fixed.spec.reason);
  }
  const source = read("packages/sdk/src/errors.ts");
  assert.deepEqual(
    mappings(source, /status === (\d+) && code === "([a-z_]+)"\) \{\s*return new (\w+)\(/g),
    expected("Error"),
  );
});

test("Python SDK: gateway_error_for maps each registry error to its class, and no other", () => {
  const source = read("sdks/python/src/atrium/errors.py");
  assert.deepEqual(
    mappings(source, /status == (\d+) and code == "([a-z_]+)":\s*return (\w+)\(/g),
    expected(""),
  );
  for (const spec of specs) {
    assert.match(source, new RegExp(`^class ${spec.sdkName}\\(`, "m"), `class ${spec.sdkName}`);
  }
});

test("Go SDK: gatewayError maps each registry error to its type, and no other", () => {
  const source = read("sdks/go/errors.go");
  assert.deepEqual(
    mappings(source, /e\.Status == (\d+) && e\.Code == "([a-z_]+)":\s*return &(\w+)\{/g),
    expected("Error"),
  );
  for (const spec of specs) {
    assert.match(source, new RegExp(`^type ${spec.sdkName}Error struct`, "m"));
  }
});

test("conformance vectors: every typed error they expect is a registry error with its status and body", () => {
  const { cases } = JSON.parse(read("sdks/conformance/services.json")) as {
    cases: {
      name: string;
      steps: { expect: { error?: string; status?: number; body?: object } }[];
    }[];
  };
  const bySdkName = new Map(specs.map((spec) => [spec.sdkName, spec]));
  let typedExpectations = 0;
  for (const { name, steps } of cases) {
    for (const { expect } of steps) {
      if (expect.error === undefined) continue;
      if (expect.error === "AtriumError" || expect.error === "GatewayError") continue;
      const spec = bySdkName.get(expect.error);
      assert.ok(spec, `${name}: ${expect.error} is no registry error's SDK name`);
      assert.equal(expect.status, spec.httpStatus, `${name}: ${expect.error}`);
      if (expect.body) {
        assert.equal(
          (expect.body as Record<string, unknown>)[spec.bodyField],
          spec.reason,
          `${name}: ${expect.error} body`,
        );
      }
      typedExpectations++;
    }
  }
  assert.ok(typedExpectations > 0, "the vectors expect at least one typed error");
});

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import type { ConnectionToken } from "../gateway-types.js";
import { injectCredential, resolveStrategy } from "./inject-credential.js";

/**
 * The cross-language vectors in sdks/conformance/injection.json: the Python and Go SDKs run the
 * same cases, so the three inject byte-identical credentials.
 */
interface InjectionCase {
  name: string;
  token: ConnectionToken;
  request: { method: string; url: string; headers: Record<string, string>; body: string | null };
  signing_date?: string;
  expect: { url?: string; headers?: Record<string, string>; error?: true };
}

const { cases } = JSON.parse(
  readFileSync(new URL("../../../../sdks/conformance/injection.json", import.meta.url), "utf8"),
) as { cases: InjectionCase[] };

for (const c of cases) {
  test(`conformance: ${c.name}`, async () => {
    const inject = async () => {
      const out = await injectCredential(
        {
          url: new URL(c.request.url),
          method: c.request.method,
          headers: new Headers(c.request.headers),
          body: c.request.body === null ? undefined : new TextEncoder().encode(c.request.body),
        },
        c.token,
        resolveStrategy(c.token),
        { signingDate: c.signing_date ? new Date(c.signing_date) : undefined },
      );
      return { url: out.url.toString(), headers: Object.fromEntries(out.headers) };
    };
    if (c.expect.error) await assert.rejects(inject());
    else assert.deepEqual(await inject(), c.expect);
  });
}

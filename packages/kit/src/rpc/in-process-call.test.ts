import assert from "node:assert/strict";
import { test } from "node:test";
import { memoryV1 } from "@atrium/api";
import { createContextValues } from "@connectrpc/connect";
import { identityKey } from "../auth/identity.js";
import { AtriumError, Code } from "../errors.js";
import { callInProcess } from "./in-process-call.js";

const service = memoryV1.MemoryService;

test("a handler called in process sees the context values and headers, and answers REST JSON", async () => {
  const json = await callInProcess(
    service,
    service.method.createSession,
    (request, context) => {
      const identity = context.values.get(identityKey);
      return {
        sessionId: `${identity?.tenantId}/${request.userId}/${context.requestHeader.get("user-agent")}`,
      };
    },
    { tenantId: "t", userId: "u", agentId: "a" },
    {
      contextValues: createContextValues().set(identityKey, { tenantId: "acme", userId: "x" }),
      headers: { "user-agent": "atrium-mcp/test" },
    },
  );
  assert.deepEqual(json, { session_id: "acme/u/atrium-mcp/test" });
});

test("a handler's error is thrown as it was thrown", async () => {
  const refusal = new AtriumError(Code.NotFound, "no session s-1");
  await assert.rejects(
    callInProcess(
      service,
      service.method.getSession,
      () => {
        throw refusal;
      },
      { sessionId: "s-1" },
    ),
    (error) => error === refusal,
  );
});

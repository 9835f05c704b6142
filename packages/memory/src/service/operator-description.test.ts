import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import Fastify from "fastify";
import { memoryOperatorOpenApiDocument } from "./operator-description.js";
import { operatorPrefix, registerOperatorRoutes } from "./operator-routes.js";

const committedPath = new URL("../../../../openapi/memory.operator.openapi.json", import.meta.url);

type Operation = { operationId?: string; summary?: string; responses: Record<string, unknown> };
type Document = { paths: Record<string, Record<string, Operation>> };

test("the committed openapi/memory.operator.openapi.json is what the route schemas describe (make gen)", async () => {
  const committed = JSON.parse(await readFile(committedPath, "utf8"));
  assert.deepEqual(await memoryOperatorOpenApiDocument(), committed);
  assert.equal(committed.info.license.name, "Apache-2.0");
  assert.deepEqual(committed.security, [{ ApiKey: [] }, { ApiKeyBearer: [] }, {}]);
});

test("every operator route memory registers is described, with its errors in the one error body", async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  const registered: string[] = [];
  app.addHook("onRoute", (route) => {
    if (!route.url.startsWith(operatorPrefix)) return;
    for (const method of [route.method].flat()) {
      if (method !== "HEAD") registered.push(`${method.toLowerCase()} ${route.url}`);
    }
  });
  // As start.ts registers them, erasure included.
  const standIn = {} as never;
  await registerOperatorRoutes(app, {
    sql: standIn,
    events: standIn,
    retrieval: standIn,
    embedder: standIn,
    stmWindowSize: 0,
    forget: standIn,
  });
  await app.ready();
  assert.ok(registered.length >= 6, registered.join(", "));

  const document = JSON.parse(await readFile(committedPath, "utf8")) as Document;
  const described = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method} ${path}`),
  );
  assert.deepEqual(described.sort(), [...registered].sort());
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const name = `${method} ${path}`;
      assert.ok(operation.operationId && operation.summary, `${name} has a description`);
      for (const status of ["400", "401", "403", "503"]) {
        const body = (
          operation.responses[status] as {
            content: { "application/json": { schema: { required: string[] } } };
          }
        )?.content["application/json"].schema;
        assert.deepEqual(body?.required, ["code", "message"], `${name} ${status}`);
      }
    }
  }
});

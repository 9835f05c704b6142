import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import Fastify from "fastify";
import { gatewayOperatorOpenApiDocument } from "./operator-description.js";
import { configureOperatorRoutes } from "./operator-routes.js";

const committedPath = new URL("../../../../openapi/gateway.operator.openapi.json", import.meta.url);

type Operation = { operationId?: string; summary?: string; responses: Record<string, unknown> };
type Document = { paths: Record<string, Record<string, Operation>> };

/** Fastify's route syntax as OpenAPI writes it; the memory wildcard is documented as `{view}`. */
const asOpenApiPath = (url: string) =>
  url.replace(/:([A-Za-z_]+)/g, "{$1}").replace(/\/\*$/, "/{view}");

test("the committed openapi/gateway.operator.openapi.json is what the route schemas describe (make gen)", async () => {
  const committed = JSON.parse(await readFile(committedPath, "utf8"));
  assert.deepEqual(await gatewayOperatorOpenApiDocument(), committed);
  assert.equal(committed.info.license.name, "Apache-2.0");
  assert.deepEqual(committed.security, [{ ApiKey: [] }, {}]);
});

test("every operator route the gateway registers is described, with its errors in the one error body", async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  const registered: string[] = [];
  app.addHook("onRoute", (route) => {
    if (!route.url.startsWith("/v1/operator/")) return;
    for (const method of [route.method].flat()) {
      if (method !== "HEAD") registered.push(`${method.toLowerCase()} ${asOpenApiPath(route.url)}`);
    }
  });
  // As start-gateway-service.ts configures them.
  const standIn = { url: "http://127.0.0.1:9", apiKey: undefined };
  configureOperatorRoutes(app, {
    broker: {} as never,
    memory: standIn,
    chat: standIn,
    timeoutMs: 1,
  });
  await app.ready();
  assert.ok(registered.length >= 8, registered.join(", "));

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

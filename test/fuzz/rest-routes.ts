import { readFileSync } from "node:fs";
import { fieldBodies, genericBodies, hostileIds, type Probe } from "./hostile-input.js";

/** One REST operation of a service, from its committed OpenAPI document. */
export interface RestOperation {
  method: string;
  path: string;
  fields: { name: string; kind: string }[];
  hasBody: boolean;
}

interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
}

export function operationsOf(file: URL): RestOperation[] {
  const doc = JSON.parse(readFileSync(file, "utf8")) as {
    paths: Record<
      string,
      Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>
    >;
    components?: { schemas?: Record<string, Schema> };
  };
  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref ? doc.components?.schemas?.[schema.$ref.split("/").pop() ?? ""] : schema;
  const operations: RestOperation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const schema = resolve(op.requestBody?.content?.["application/json"]?.schema);
      const fields = Object.entries(schema?.properties ?? {}).map(([name, property]) => {
        const p = resolve(property) ?? {};
        return { name, kind: p.format === "byte" ? "bytes" : (p.type ?? "object") };
      });
      operations.push({ method: method.toUpperCase(), path, fields, hasBody: !!op.requestBody });
    }
  }
  return operations;
}

/** Every hostile id in every path parameter, a `%00` query, and every hostile body. */
export async function probeRestOperation(
  baseUrl: string,
  op: RestOperation,
  headers: Record<string, string>,
  onProbe: (probe: Probe) => void,
): Promise<void> {
  const withIds = (id: string) => op.path.replace(/\{[^}]+\}/g, id);
  const send = async (path: string, body?: string) => {
    const what = `${op.method} ${path.slice(0, 80)} ${body?.slice(0, 60) ?? ""}`;
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method: op.method,
        headers: {
          ...headers,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(20_000),
      });
      await res.arrayBuffer();
      onProbe({ what, status: res.status });
    } catch (error) {
      onProbe({ what: `${what} (${(error as Error).name})`, status: 599 });
    }
  };
  const validBody = op.hasBody ? "{}" : undefined;
  for (const id of op.path.includes("{") ? hostileIds : []) await send(withIds(id), validBody);
  const path = withIds("fuzz-id");
  await send(`${path}?workspace_id=%00&resource_id=%00&limit=%00&x=%ED%A0%80`, validBody);
  await send(`${path}?limit=-1&page_size=abc&offset=1e999&top_k=99999999999`, validBody);
  if (!op.hasBody && op.method === "GET") return;
  for (const body of [...fieldBodies(op.fields), ...genericBodies]) await send(path, body);
}

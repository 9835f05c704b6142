import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { secretFingerprint } from "../fingerprint.js";
import {
  isRecord,
  type ManifestRecord,
  type ManifestValue,
  NumberText,
  toExactJson,
} from "../manifest-value.js";
import { parseExactJson } from "../yaml-values.js";

export interface RecordedRequest {
  method: string;
  path: string;
  userAgent?: string;
  apiKey?: string;
  body?: ManifestRecord;
}

export interface FakeBroker {
  url: string;
  apiKey: string;
  requests: RecordedRequest[];
  providers: Map<string, ManifestRecord>;
  /** Provider names whose writes answer 500. */
  failing: Set<string>;
  maxInFlight: number;
  close(): Promise<void>;
}

/**
 * An in-memory stand-in for the broker's provider REST API, for CLI tests that need failure
 * injection and request inspection. Params are stored as exact text, as the broker stores them.
 */
export async function startFakeBroker(): Promise<FakeBroker> {
  const state: FakeBroker = {
    url: "",
    apiKey: "test-key",
    requests: [],
    providers: new Map(),
    failing: new Set(),
    maxInFlight: 0,
    close: async () => {},
  };
  let inFlight = 0;
  let nextId = 1;
  const server: Server = createServer(async (req, res) => {
    inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, inFlight);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
      inFlight--;
    };
    const text = await readBody(req);
    const url = new URL(req.url ?? "/", "http://x");
    const body = text ? (parseExactJson(text) as ManifestRecord) : undefined;
    state.requests.push({
      method: req.method ?? "",
      path: url.pathname,
      userAgent: req.headers["user-agent"],
      apiKey: req.headers["x-api-key"] as string | undefined,
      body,
    });
    // Concurrency is only observable when requests overlap.
    await new Promise((r) => setTimeout(r, 2));
    if (req.headers["x-api-key"] !== state.apiKey) return send(401, { error: "unauthorized" });
    const id = url.pathname.split("/")[2];
    const current = id ? state.providers.get(id) : undefined;
    const name = String(body?.name ?? current?.name ?? "");
    if (req.method !== "GET" && state.failing.has(name)) {
      return send(500, { error: "internal", message: `injected failure for ${name}` });
    }
    if (req.method === "GET" && url.pathname === "/providers") {
      return send(
        200,
        `{"providers":[${[...state.providers.values()].map(toExactJson).join(",")}]}`,
      );
    }
    if (req.method === "POST" && url.pathname === "/providers" && body) {
      const created = store({ id: `p${nextId++}` }, body);
      state.providers.set(String(created.id), created);
      return send(201, toExactJson(created));
    }
    if (!current) return send(404, { error: "not_found" });
    if (req.method === "GET") return send(200, toExactJson(current));
    if (req.method === "PATCH" && body) return send(200, toExactJson(store(current, body)));
    if (req.method === "DELETE") {
      state.providers.delete(String(current.id));
      return send(200, { id: current.id, deleted: true });
    }
    return send(405, { error: "method_not_allowed" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}

function store(target: ManifestRecord, patch: ManifestRecord): ManifestRecord {
  for (const [key, value] of Object.entries(patch)) {
    if (key === "client_secret" && typeof value === "string") {
      target.client_secret_fingerprint = secretFingerprint(value);
    } else if (key === "params" && isRecord(value)) {
      target.params = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, exactText(v)]));
    } else {
      target[key] = value;
    }
  }
  return target;
}

function exactText(value: ManifestValue): string {
  return value instanceof NumberText ? value.text : String(value);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk) => {
      text += chunk;
    });
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

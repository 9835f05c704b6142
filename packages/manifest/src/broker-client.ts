import {
  isRecord,
  type ManifestRecord,
  type ManifestValue,
  toExactJson,
} from "./manifest-value.js";
import { USER_AGENT } from "./version.js";
import { parseExactJson } from "./yaml-values.js";

/** A provider (or webhook) as the broker returns it; numbers keep the text the broker sent. */
export interface LiveProvider {
  id: string;
  name: string;
  fields: ManifestRecord;
}

export interface BrokerClientOptions {
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
}

export interface BrokerClient {
  listProviders(): Promise<LiveProvider[]>;
  getProvider(id: string): Promise<LiveProvider>;
  createProvider(body: ManifestRecord): Promise<LiveProvider>;
  /** PATCH merges exactly the keys sent; the broker derives its update mask from them. */
  updateProvider(id: string, body: ManifestRecord): Promise<LiveProvider>;
  deleteProvider(id: string): Promise<void>;
  /** Subscriptions carry their whole profile in the list: no read per subscription. */
  listWebhooks(): Promise<LiveProvider[]>;
  createWebhook(body: ManifestRecord): Promise<LiveProvider>;
  /** PATCH merges the fields sent. */
  updateWebhook(id: string, body: ManifestRecord): Promise<LiveProvider>;
  deleteWebhook(id: string): Promise<void>;
}

export class BrokerRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "BrokerRequestError";
  }
}

/** The broker's REST provider API; every request carries the key and the tool's User-Agent. */
export function createBrokerClient(options: BrokerClientOptions): BrokerClient {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;

  async function request(
    method: string,
    path: string,
    body?: ManifestRecord,
  ): Promise<ManifestValue> {
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, {
        method,
        headers: {
          "X-API-Key": options.apiKey,
          "User-Agent": USER_AGENT,
          Accept: "application/json",
          ...(body ? { "Content-Type": "application/json" } : {}),
        },
        body: body ? toExactJson(body) : undefined,
      });
    } catch (error) {
      throw new Error(`${method} ${path}: broker unreachable (${(error as Error).message})`);
    }
    const text = await response.text();
    if (!response.ok) {
      throw new BrokerRequestError(
        response.status,
        `${method} ${path}: ${response.status} ${errorText(text)}`,
      );
    }
    return text.trim() === "" ? null : parseExactJson(text);
  }

  return {
    async listProviders() {
      const body = await request("GET", "/providers");
      const list = isRecord(body) ? body.providers : body;
      return Array.isArray(list) ? list.map(toLiveProvider) : [];
    },
    async getProvider(id) {
      return toLiveProvider(await request("GET", `/providers/${encodeURIComponent(id)}`));
    },
    async createProvider(body) {
      return toLiveProvider(await request("POST", "/providers", body));
    },
    async updateProvider(id, body) {
      return toLiveProvider(await request("PATCH", `/providers/${encodeURIComponent(id)}`, body));
    },
    async deleteProvider(id) {
      await request("DELETE", `/providers/${encodeURIComponent(id)}`);
    },
    async listWebhooks() {
      const body = await request("GET", "/webhooks");
      const list = isRecord(body) ? body.webhooks : body;
      return Array.isArray(list) ? list.map(toLiveProvider) : [];
    },
    async createWebhook(body) {
      return toLiveProvider(await request("POST", "/webhooks", body));
    },
    async updateWebhook(id, body) {
      return toLiveProvider(await request("PATCH", `/webhooks/${encodeURIComponent(id)}`, body));
    },
    async deleteWebhook(id) {
      await request("DELETE", `/webhooks/${encodeURIComponent(id)}`);
    },
  };
}

/** Broker error bodies carry `code` or `error`, `message`, and for rule violations `findings`. */
export function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const parts = [body.code ?? body.error, body.message].filter((p) => typeof p === "string");
    const findings = Array.isArray(body.findings)
      ? (body.findings as { field?: unknown; message?: unknown }[])
          .map((f) => `${f.field} ${f.message}`)
          .join("; ")
      : "";
    if (parts.length > 0) return `${parts.join(": ")}${findings ? ` (${findings})` : ""}`;
  } catch {
    // Not JSON: use the raw text.
  }
  return text.slice(0, 200);
}

/** Top-level keys may arrive in proto JSON camelCase; params keys are user data and stay as sent. */
function toLiveProvider(value: ManifestValue): LiveProvider {
  if (!isRecord(value)) throw new Error("broker returned a resource that is not an object");
  const fields: ManifestRecord = {};
  for (const [key, item] of Object.entries(value)) {
    fields[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = item;
  }
  return { id: String(fields.id ?? ""), name: String(fields.name ?? ""), fields };
}

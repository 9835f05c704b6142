import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrokerService, startBrokerService } from "@atrium/broker";
import { createLogger } from "@atrium/kit";

export interface RealBroker {
  service: BrokerService;
  url: string;
  apiKey: string;
  /** atriumctl's environment for this broker. */
  cliEnv(extra?: Record<string, string>): Record<string, string>;
  request(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
}

/** The real broker on loopback with an embedded PGlite database in a temporary directory. */
export async function startRealBroker(): Promise<RealBroker> {
  const apiKey = `key-${randomBytes(8).toString("hex")}`;
  const service = await startBrokerService({
    env: {
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      STATE_KEY: randomBytes(32).toString("hex"),
      API_KEYS: apiKey,
      BROKER_HOST: "127.0.0.1",
      BROKER_REST_PORT: "0",
      BROKER_GRPC_PORT: "0",
      REFRESH_LOOP: "false",
      ATRIUM_DATA_DIR: await mkdtemp(join(tmpdir(), "atriumctl-broker-")),
    },
    logger: createLogger({ name: "broker", level: "silent" }),
  });
  const url = service.urls.rest;
  return {
    service,
    url,
    apiKey,
    cliEnv: (extra = {}) => ({ ATRIUM_BROKER_URL: url, ATRIUM_BROKER_API_KEY: apiKey, ...extra }),
    async request(method, path, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          "x-api-key": apiKey,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await response.json()) as Record<string, unknown>;
    },
  };
}

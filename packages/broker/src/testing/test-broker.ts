import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import type { TestContext } from "node:test";
import { createLogger, type Sql } from "@atrium/kit";
import { createTestPostgres, type TestPostgres } from "@atrium/kit/testing";
import { type BrokerService, startBrokerService } from "../service/start-broker-service.js";

export interface TestBroker {
  service: BrokerService;
  url: string;
  apiKey: string;
  env: Record<string, string>;
  /** Every log line the broker wrote, for the no-secrets-in-logs check. */
  logs: string[];
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{
    status: number;
    body: Record<string, unknown>;
  }>;
  stop(): Promise<void>;
}

/** Keys generated per run, so a test can grep the logs for them. */
export function testBrokerEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    STATE_KEY: randomBytes(32).toString("hex"),
    API_KEYS: `test-api-key-${randomBytes(12).toString("hex")}`,
    BROKER_HOST: "127.0.0.1",
    BROKER_REST_PORT: "0",
    BROKER_GRPC_PORT: "0",
    REFRESH_LOOP: "false",
    ...overrides,
  };
}

export async function startTestBroker(options: {
  sql: Sql;
  env?: Record<string, string>;
}): Promise<TestBroker> {
  const env = options.env ?? testBrokerEnv();
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ name: "broker", level: "debug", destination });
  const service = await startBrokerService({ env, logger, sql: options.sql });
  const apiKey = env.API_KEYS.split(",")[0];
  const url = service.urls.rest;
  return {
    service,
    url,
    apiKey,
    env,
    logs,
    async call(method, path, body, headers = {}) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          "x-api-key": apiKey,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        body:
          body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await response.text();
      return {
        status: response.status,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      };
    },
    stop: () => service.stop(),
  };
}

export interface BrokerOnTestPostgres {
  broker: TestBroker;
  pg: TestPostgres;
  /** Another broker on the same database (a second instance, another configuration). */
  another(env?: Record<string, string>): Promise<TestBroker>;
}

/**
 * A broker (`env`, default testBrokerEnv()) on a fresh PostgreSQL database of its own; after `t`
 * every broker started here is stopped and the database dropped.
 */
export async function startBrokerOnTestPostgres(
  t: TestContext,
  env?: Record<string, string>,
): Promise<BrokerOnTestPostgres> {
  const pg = await createTestPostgres();
  const started: TestBroker[] = [];
  t.after(async () => {
    for (const broker of started) await broker.stop();
    await pg.drop();
  });
  const another = async (anotherEnv?: Record<string, string>) => {
    const broker = await startTestBroker({ sql: pg.sql, env: anotherEnv });
    started.push(broker);
    return broker;
  };
  return { broker: await another(env), pg, another };
}

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { type BrokerService, startBrokerService } from "@atrium/broker";
import { testBrokerEnv } from "@atrium/broker/testing";
import { type GatewayService, startGatewayService } from "@atrium/gateway";
import { createLogger } from "@atrium/kit";
import { type OwnPostgres, startOwnPostgres } from "./fault-servers.js";

/**
 * The broker's PostgreSQL (a cluster of this test's own) is stopped while agents read tokens
 * through the gateway: every read, alone or gathered with others into one broker call, over the
 * gateway's gRPC link to the broker or its REST fallback, is 503 with the broker's Retry-After
 * (the gateway dropped it: 30 of 30 reads had none).
 */

const logger = createLogger({ name: "faults", level: "silent" });
let pg: OwnPostgres | undefined;
let broker: BrokerService | undefined;
const gateways: GatewayService[] = [];
const provider = createServer((_req, res) => res.end("{}"));

after(async () => {
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await broker?.stop();
  await pg?.destroy();
  await new Promise((resolve) => provider.close(resolve));
});

test("token reads through the gateway in a broker database outage carry Retry-After", async () => {
  pg = await startOwnPostgres();
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
  const env = testBrokerEnv({ DATABASE_URL: pg.url });
  broker = await startBrokerService({ logger, env });
  const brokerCall = (path: string, body: unknown) =>
    fetch(`${broker?.urls.rest}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": env.API_KEYS },
      body: JSON.stringify(body),
    }).then((response) => response.json() as Promise<{ id: string }>);
  const keyed = await brokerCall("/providers", {
    name: "keyed",
    auth_type: "api_key",
    api_base_url: `http://127.0.0.1:${(provider.address() as AddressInfo).port}`,
  });
  const connection = await brokerCall("/connections/static", {
    provider_id: keyed.id,
    workspace_id: "ws",
    api_key: "good-key",
  });

  const gatewayEnv = {
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_REST_PORT: "0",
    GATEWAY_GRPC_PORT: "0",
    BROKER_URL: broker.urls.rest,
    BROKER_API_KEY: env.API_KEYS,
  };
  const overGrpc = await startGatewayService({
    logger,
    env: { ...gatewayEnv, BROKER_GRPC_URL: broker.urls.grpc ?? "" },
  });
  const overRest = await startGatewayService({ logger, env: gatewayEnv });
  gateways.push(overGrpc, overRest);
  const read = (gateway: GatewayService) =>
    fetch(`${gateway.urls.rest}/v1/token/${connection.id}?workspace_id=ws`);
  assert.equal((await read(overGrpc)).status, 200);

  await pg.stop();
  for (const gateway of [overGrpc, overRest]) {
    const alone = [await read(gateway)];
    const gathered = await Promise.all(Array.from({ length: 30 }, () => read(gateway)));
    for (const answer of [...alone, ...gathered]) {
      assert.equal(answer.status, 503, await answer.text());
      assert.equal(answer.headers.get("retry-after"), "1");
    }
  }
});

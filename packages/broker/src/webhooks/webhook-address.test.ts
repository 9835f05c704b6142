import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { test } from "node:test";
import { startWebhookReceiver } from "@atrium/kit/testing";
import { createAddressVetter, type ResolveHost, WebhookAddressError } from "./webhook-address.js";
import { postWebhook } from "./webhook-request.js";

/** A resolver for names no real DNS knows, counting how often each was asked. */
function fakeDns(zone: Record<string, string[]>): ResolveHost & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<LookupAddress[]> => {
    asked.push(hostname);
    return (zone[hostname] ?? []).map((address) => ({
      address,
      family: address.includes(":") ? 6 : 4,
    }));
  };
  return Object.assign(resolve, { asked });
}

test("address: a name resolving to any non-public address is refused", async () => {
  const dns = fakeDns({
    "metadata.test": ["169.254.169.254"],
    "mixed.test": ["93.184.215.14", "10.0.0.7"],
    "ula.test": ["fd00::1"],
    "mapped.test": ["::ffff:192.168.1.1"],
    "loop.test": ["127.0.0.1"],
    "public.test": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "empty.test": [],
  });
  const vet = createAddressVetter({ allowLoopback: false, resolve: dns });
  for (const host of ["metadata.test", "mixed.test", "ula.test", "mapped.test", "loop.test"]) {
    await assert.rejects(vet(host), WebhookAddressError, host);
  }
  await assert.rejects(vet("empty.test"), /no address/);
  await assert.rejects(vet("127.0.0.1"), WebhookAddressError);
  await assert.rejects(vet("[::1]"), WebhookAddressError);
  assert.equal((await vet("public.test")).length, 2);
  assert.deepEqual(await vet("93.184.215.14"), [{ address: "93.184.215.14", family: 4 }]);
  assert.ok(!dns.asked.includes("127.0.0.1"), "an IP literal is not resolved");
});

test("address: loopback passes only when allowed, other private ranges never", async () => {
  const dns = fakeDns({ "loop.test": ["127.0.0.1"], "lan.test": ["192.168.1.1"] });
  const vet = createAddressVetter({ allowLoopback: true, resolve: dns });
  assert.deepEqual(await vet("loop.test"), [{ address: "127.0.0.1", family: 4 }]);
  await assert.rejects(vet("lan.test"), WebhookAddressError);
});

test("address: the connection goes to the vetted address, the name is asked once", async (t) => {
  const receiver = await startWebhookReceiver();
  t.after(() => receiver.close());
  const port = new URL(receiver.url).port;
  const dns = fakeDns({ "receiver.test": ["127.0.0.1"] });
  const vet = createAddressVetter({ allowLoopback: true, resolve: dns });
  const addresses = await vet("receiver.test");
  const status = await postWebhook({
    url: `http://receiver.test:${port}/hook`,
    headers: { "webhook-id": "msg_1" },
    body: "{}",
    addresses,
    signal: AbortSignal.timeout(5_000),
  });
  assert.equal(status, 204);
  assert.equal(receiver.received.length, 1);
  assert.equal(receiver.received[0].id, "msg_1");
  assert.deepEqual(dns.asked, ["receiver.test"]);
});

test("address: a socket is never pointed at an address that was not vetted", async (t) => {
  const receiver = await startWebhookReceiver();
  t.after(() => receiver.close());
  const port = new URL(receiver.url).port;
  // The receiver listens on 127.0.0.1; the vetted answer for the name is another address.
  await assert.rejects(
    postWebhook({
      url: `http://receiver.test:${port}/hook`,
      headers: {},
      body: "{}",
      addresses: [{ address: "::1", family: 6 }],
      signal: AbortSignal.timeout(5_000),
    }),
    (error: NodeJS.ErrnoException) =>
      ["ECONNREFUSED", "EADDRNOTAVAIL", "ENETUNREACH"].includes(String(error.code)),
  );
  assert.equal(receiver.received.length, 0);
});

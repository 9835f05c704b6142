import assert from "node:assert/strict";
import { test } from "node:test";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createExchangeTransport } from "./exchange-transport.js";

const request = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, method: "ping" });
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: { id } });

test("an exchange is answered once, in its requests' order, with its own notifications only", async () => {
  const transport = createExchangeTransport();
  const received: JSONRPCMessage[] = [];
  transport.onmessage = (message) => received.push(message);
  const notified: JSONRPCMessage[] = [];
  const answered: JSONRPCMessage[][] = [];
  transport.exchange(
    [request(1), request(2)],
    {},
    {
      notify: (message) => notified.push(message),
      answered: (responses) => answered.push(responses),
    },
  );
  assert.equal(received.length, 2);
  const progress: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/progress" };
  await transport.send(progress, { relatedRequestId: 2 });
  await transport.send(progress, { relatedRequestId: 9 });
  await transport.send(progress);
  await transport.send(answer(2));
  assert.deepEqual(answered, [], "not before every request is answered");
  await transport.send(answer(1));
  assert.deepEqual(answered, [[answer(1), answer(2)]]);
  assert.deepEqual(notified, [progress]);
  // A late or stray answer after the exchange goes nowhere.
  await transport.send(answer(1));
  assert.equal(answered.length, 1);
});

test("an exchange of notifications only is answered at once with nothing", () => {
  const transport = createExchangeTransport();
  const answered: JSONRPCMessage[][] = [];
  transport.exchange(
    [{ jsonrpc: "2.0", method: "notifications/initialized" }],
    {},
    {
      notify: () => {},
      answered: (responses) => answered.push(responses),
    },
  );
  assert.deepEqual(answered, [[]]);
});

test("a closed transport takes no exchange and tells its server once", async () => {
  const transport = createExchangeTransport();
  let closes = 0;
  transport.onclose = () => closes++;
  await transport.close();
  await transport.close();
  assert.equal(closes, 1);
  assert.throws(() =>
    transport.exchange([request(1)], {}, { notify: () => {}, answered: () => {} }),
  );
});

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import {
  assertPortsFree,
  namePortInUse,
  type Ports,
  portVariables,
  resolvePorts,
} from "./ports.js";

test("a port in use is named by the variable that moves it", async (t) => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  t.after(() => taken.close());
  const port = (taken.address() as { port: number }).port;
  // Port 0 is never checked, so only the taken one can fail.
  const ports = Object.fromEntries(portVariables.map((variable) => [variable, 0])) as Ports;
  ports.MEMORY_REST_PORT = port;
  await assert.rejects(
    assertPortsFree(ports, "127.0.0.1"),
    new RegExp(
      `port ${port} on 127.0.0.1 is already in use \\(MEMORY_REST_PORT\\): set MEMORY_REST_PORT to a free port, or ATRIUM_PORT_OFFSET`,
    ),
  );
});

test("Node's EADDRINUSE from a listen is renamed after the port's variable", () => {
  const ports = resolvePorts({ ATRIUM_PORT_OFFSET: "5" });
  const error = Object.assign(new Error("listen EADDRINUSE: address already in use"), {
    code: "EADDRINUSE",
    port: 9097,
  });
  assert.match(String(namePortInUse(error, ports, "127.0.0.1")), /\(GATEWAY_GRPC_PORT\)/);
  const other = new Error("boom");
  assert.equal(namePortInUse(other, ports, "127.0.0.1"), other);
});

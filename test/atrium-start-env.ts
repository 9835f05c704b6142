import { freePort } from "./gateway-tcp-proxy.js";

/**
 * The environment for `atrium start` with every service on a spare port and each service told
 * where the others are, so a test never collides with a running `make start` or another test.
 */
export async function atriumStartEnv(dataDir: string) {
  const [memRest, memGrpc, brokerRest, brokerGrpc, gwRest, gwGrpc, agent] = await Promise.all(
    Array.from({ length: 7 }, freePort),
  );
  return {
    ports: { memRest, memGrpc, brokerRest, brokerGrpc, gwRest, gwGrpc, agent },
    env: {
      ATRIUM_DATA_DIR: dataDir,
      MEMORY_REST_PORT: String(memRest),
      MEMORY_GRPC_PORT: String(memGrpc),
      BROKER_REST_PORT: String(brokerRest),
      BROKER_GRPC_PORT: String(brokerGrpc),
      GATEWAY_REST_PORT: String(gwRest),
      GATEWAY_GRPC_PORT: String(gwGrpc),
      AGENT_PORT: String(agent),
      MEMORY_URL: `http://127.0.0.1:${memRest}`,
      MEMORY_GRPC_URL: `http://127.0.0.1:${memGrpc}`,
      BROKER_URL: `http://127.0.0.1:${brokerRest}`,
      BROKER_GRPC_URL: `http://127.0.0.1:${brokerGrpc}`,
    },
  };
}

import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from "node:net";

/** A port that was free a moment ago, for a service whose public URL must be known up front. */
export async function freePort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface TcpProxy {
  url: string;
  /** Connections accepted so far. */
  accepted(): number;
  /** Drops the open connections but keeps listening: a network blip. */
  cut(): void;
  /** Drops the open connections and refuses new ones until `heal`: a network partition. */
  partition(): void;
  heal(): void;
  /** Stops listening and cuts open connections: the target looks gone to the client. */
  close(): Promise<void>;
}

/** Forwards a loopback port to `target`, so a test can take one listener away. */
export async function startTcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  let partitioned = false;
  const server = createTcpServer((client) => {
    if (partitioned) {
      client.destroy();
      return;
    }
    accepted += 1;
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    cut() {
      for (const socket of sockets) socket.destroy();
    },
    partition() {
      partitioned = true;
      for (const socket of sockets) socket.destroy();
    },
    heal() {
      partitioned = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

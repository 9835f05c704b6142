import { type AddressInfo, connect, createServer, type Socket } from "node:net";

export interface AllowlistListenerOptions {
  host: string;
  port: number;
  /** The gRPC server behind it, on loopback. */
  targetPort: number;
  isAllowed(ip: string): boolean;
  onRefused?: (ip: string) => void;
}

export interface AllowlistListener {
  port: number;
  close(): Promise<void>;
}

/**
 * ALLOWED_CIDRS for the gRPC port, enforced at connection time: the service host's gRPC server
 * exposes no peer address to handlers, so a listener in front of it checks the TCP peer and pipes
 * allowed connections through. A refused peer sees its connection closed.
 */
export async function startAllowlistListener(
  options: AllowlistListenerOptions,
): Promise<AllowlistListener> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const ip = client.remoteAddress ?? "";
    if (!options.isAllowed(ip)) {
      options.onRefused?.(ip);
      client.destroy();
      return;
    }
    const upstream = connect(options.targetPort, "127.0.0.1");
    track(client);
    track(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

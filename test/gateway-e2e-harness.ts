import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface ProtectedResource {
  url: string;
  lastAuthorization(): string | undefined;
  close(): Promise<void>;
}

/** An API that accepts a bearer token only if the provider's userinfo endpoint does. */
export async function startProtectedResource(userinfoEndpoint: string): Promise<ProtectedResource> {
  let lastAuthorization: string | undefined;
  const server = createServer(async (req, res) => {
    lastAuthorization = req.headers.authorization;
    const check = await fetch(userinfoEndpoint, {
      headers: { authorization: req.headers.authorization ?? "" },
    });
    const body = await check.text();
    res.writeHead(check.ok ? 200 : 401, { "content-type": "application/json" });
    res.end(
      check.ok
        ? JSON.stringify({ resource: "secret-data", user: JSON.parse(body).sub })
        : JSON.stringify({ error: "invalid_token" }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lastAuthorization: () => lastAuthorization,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Plays the browser through login and consent; returns the redirect to `redirectUri`. */
  authorize(authorizationUrl: string): Promise<URL>;
  userinfoEndpoint: string;
  close(): Promise<void>;
}

/** `oidc-provider` (a certified OpenID Provider) on loopback; refresh tokens issued and rotated. */
export async function startTestIdp(redirectUri: string): Promise<TestIdp> {
  const clientId = "atrium-gateway-e2e";
  const clientSecret = "e2e-client-secret-0123456789abcdef";
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    cookies: { keys: ["atrium-e2e-cookie-key"] },
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, email: `${sub}@example.test` }),
    }),
    features: { devInteractions: { enabled: false }, revocation: { enabled: true } },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
    issueRefreshToken: async () => true,
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: 3600,
      IdToken: 3600,
      RefreshToken: 86400,
      Session: 86400,
      Grant: 86400,
      Interaction: 600,
    },
  });
  const handler = provider.callback();
  server.on("request", async (req, res) => {
    const interaction = /^\/interaction\/([^/]+)$/.exec(new URL(req.url ?? "/", issuer).pathname);
    if (!interaction) return handler(req, res);
    const details = await provider.interactionDetails(req, res);
    const accountId = "agent-owner";
    const grant = new provider.Grant({ accountId, clientId });
    grant.addOIDCScope(String(details.params.scope ?? "openid"));
    const grantId = await grant.save();
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  });
  const discovery = (await (
    await fetch(`${issuer}/.well-known/openid-configuration`)
  ).json()) as Record<string, string>;

  return {
    issuer,
    clientId,
    clientSecret,
    userinfoEndpoint: discovery.userinfo_endpoint,
    async authorize(authorizationUrl) {
      const cookies = new Map<string, string>();
      let next = authorizationUrl;
      for (let hop = 0; hop < 10; hop++) {
        const response = await fetch(next, {
          redirect: "manual",
          headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
        });
        for (const line of response.headers.getSetCookie()) {
          const [pair] = line.split(";");
          const eq = pair.indexOf("=");
          cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
        }
        await response.body?.cancel();
        const location = response.headers.get("location");
        if (!location) throw new Error(`authorization stopped at ${response.status} ${next}`);
        const target = new URL(location, next);
        if (target.href.startsWith(redirectUri)) return target;
        next = target.href;
      }
      throw new Error("too many redirects during authorization");
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

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

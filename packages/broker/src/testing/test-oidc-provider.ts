import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Answers 200 only for a live access token: a protected resource can check bearers with it. */
  userinfoEndpoint: string;
  /** Token endpoint requests by grant_type, counted as they arrive. */
  tokenRequests: Map<string, number>;
  /** Holds every refresh_token grant until the returned function is called. */
  holdRefreshes(): { arrived: Promise<void>; release: () => void };
  /**
   * Plays the browser: follows the authorization URL through login and consent (granted
   * programmatically) and returns the query the provider redirects to the broker's callback with.
   */
  authorize(authorizationUrl: string): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export interface TestOidcProviderOptions {
  /** The client's one registered redirect URI; default a broker callback nothing listens on. */
  redirectUri?: string;
}

/**
 * A certified OpenID Provider (`oidc-provider`) on loopback with refresh tokens always issued and
 * always rotated, and RFC 7009 revocation on.
 */
export async function startTestOidcProvider(
  options: TestOidcProviderOptions = {},
): Promise<TestOidcProvider> {
  const clientId = "atrium-broker-test";
  const clientSecret = "test-client-secret-0123456789abcdef";
  const redirectUri = options.redirectUri ?? "http://127.0.0.1:9/callback";
  const tokenRequests = new Map<string, number>();
  let hold: { arrived: () => void; gate: Promise<void> } | undefined;

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
    cookies: { keys: ["atrium-test-cookie-key"] },
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
    ttl: { AccessToken: 3600, RefreshToken: 86400, Session: 86400, Grant: 86400, Interaction: 600 },
  });

  // Counted (and optionally held) after the provider processed the grant, before the answer
  // leaves: a held refresh has rotated tokens at the provider while the broker still waits.
  provider.use(async (ctx, next) => {
    await next();
    const grantType = ctx.oidc?.params?.grant_type;
    if (ctx.path !== "/token" || typeof grantType !== "string") return;
    tokenRequests.set(grantType, (tokenRequests.get(grantType) ?? 0) + 1);
    if (grantType === "refresh_token" && hold) {
      hold.arrived();
      await hold.gate;
    }
  });
  const handler = provider.callback();
  server.on("request", async (req, res) => {
    const url = new URL(req.url ?? "/", issuer);
    const interaction = /^\/interaction\/([^/]+)$/.exec(url.pathname);
    if (interaction) {
      const details = await provider.interactionDetails(req, res);
      const accountId = "user-1";
      const grant = new provider.Grant({ accountId, clientId });
      grant.addOIDCScope(String(details.params.scope ?? "openid"));
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    handler(req, res);
  });

  async function authorize(authorizationUrl: string): Promise<URLSearchParams> {
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
      if (target.href.startsWith(redirectUri)) return target.searchParams;
      next = target.href;
    }
    throw new Error("too many redirects during authorization");
  }

  const discovery = (await (
    await fetch(`${issuer}/.well-known/openid-configuration`)
  ).json()) as Record<string, string>;

  return {
    issuer,
    clientId,
    clientSecret,
    redirectUri,
    userinfoEndpoint: discovery.userinfo_endpoint,
    tokenRequests,
    holdRefreshes() {
      let arrived!: () => void;
      let release!: () => void;
      const arrivedPromise = new Promise<void>((r) => {
        arrived = r;
      });
      const gate = new Promise<void>((r) => {
        release = r;
      });
      hold = { arrived, gate };
      return {
        arrived: arrivedPromise,
        release: () => {
          hold = undefined;
          release();
        },
      };
    },
    authorize,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { consoleAssetsDir, consoleContentSecurityPolicy, consoleIsBuilt } from "@atrium/console";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance } from "fastify";

export const consolePrefix = "/console";

/** Browsers ask an origin's root for its icon; the console's is among its files. */
const rootIcon = "/favicon.ico";

/** The console's static files are public; the key they need goes with each API call instead. */
export const consolePaths = {
  paths: [consolePrefix, rootIcon],
  pathPrefixes: [`${consolePrefix}/`],
};

function isConsolePath(path: string): boolean {
  return (
    consolePaths.paths.includes(path) || consolePaths.pathPrefixes.some((p) => path.startsWith(p))
  );
}

/**
 * GET /console/: the operator console's bundled files under a strict Content-Security-Policy.
 * Returns false (and serves nothing) when the console was not built.
 */
export async function configureConsoleRoute(app: FastifyInstance): Promise<boolean> {
  if (!consoleIsBuilt()) return false;
  app.addHook("onSend", async (request, reply, payload) => {
    if (isConsolePath(request.url.split("?")[0])) {
      reply.header("content-security-policy", consoleContentSecurityPolicy);
      reply.header("x-content-type-options", "nosniff");
      reply.header("referrer-policy", "no-referrer");
      reply.header("cache-control", "no-cache");
    }
    return payload;
  });
  app.get(rootIcon, (_request, reply) => reply.redirect(`${consolePrefix}/favicon.svg`, 301));
  await app.register(fastifyStatic, {
    root: consoleAssetsDir,
    prefix: consolePrefix,
    redirect: true,
    index: "index.html",
  });
  return true;
}

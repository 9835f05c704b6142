import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

/**
 * The router is a Fastify plugin; a host without Fastify gets this error at factory time instead
 * of a confusing failure when it mounts the plugin.
 */
export function assertFrameworkAvailable(
  resolve: (name: string) => string = require.resolve,
): void {
  try {
    resolve("fastify");
  } catch (cause) {
    throw new Error(
      "createChatRouter needs the web framework package 'fastify' (v5), which cannot be loaded; install it with `npm install fastify@5`",
      { cause },
    );
  }
}

import { createEnvSecretSource } from "./env-secret-source.js";
import { createGcpsmClient } from "./gcpsm-client.js";
import { createGcpsmSecretSource } from "./gcpsm-secret-source.js";
import type { SecretSource } from "./secret-source.js";
import { createSopsSecretSource } from "./sops-secret-source.js";

export interface SecretSourceSpecOptions {
  spec: string;
  secretPrefix: string;
  env: NodeJS.ProcessEnv;
}

/** `env`, `sops:<path>` or `gcpsm:<project>`. */
export async function createSecretSource(options: SecretSourceSpecOptions): Promise<SecretSource> {
  const { spec, env } = options;
  if (spec === "env") return createEnvSecretSource(env);
  const colon = spec.indexOf(":");
  const kind = colon < 0 ? spec : spec.slice(0, colon);
  const target = colon < 0 ? "" : spec.slice(colon + 1);
  if (kind === "sops" && target) return createSopsSecretSource({ path: target, env });
  if (kind === "gcpsm" && target) {
    return createGcpsmSecretSource({
      project: target,
      secretPrefix: options.secretPrefix,
      client: await createGcpsmClient(env),
    });
  }
  throw new Error(`-secrets must be env, sops:<path> or gcpsm:<project>, got "${spec}"`);
}

import type { SecretSource } from "./secret-source.js";

export function createEnvSecretSource(env: NodeJS.ProcessEnv): SecretSource {
  return {
    kind: "env",
    label: "the environment",
    async lookup(name) {
      const value = env[name];
      return value === undefined ? undefined : { value, plaintext: true };
    },
  };
}

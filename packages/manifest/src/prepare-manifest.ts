import { encryptedPolicyProblems, registrationProblems } from "./manifest-checks.js";
import { loadManifest } from "./manifest-loader.js";
import type { ManifestProblem } from "./manifest-problem.js";
import { type ResolvedProvider, resolvePlaceholders } from "./secrets/placeholder-resolver.js";
import { createSecretSource } from "./secrets/secret-source-spec.js";

export interface PrepareOptions {
  file: string;
  /** Undefined on validate without -secrets: placeholders then count as present. */
  secrets?: string;
  secretPrefix: string;
  requireEncrypted: boolean;
  env: NodeJS.ProcessEnv;
}

export interface PreparedManifest {
  providers: ResolvedProvider[];
  problems: ManifestProblem[];
}

/**
 * Everything that runs before the broker is contacted: strict loading, the encrypted-secrets
 * policy, placeholder resolution and the broker's registration rules. Every problem is
 * collected so one run reports them all.
 */
export async function prepareManifest(options: PrepareOptions): Promise<PreparedManifest> {
  const loaded = await loadManifest(options.file);
  const problems = [...loaded.problems];
  if (options.requireEncrypted) {
    for (const definition of loaded.providers)
      problems.push(...encryptedPolicyProblems(definition));
  }

  let providers: ResolvedProvider[] = loaded.providers.map((definition) => ({
    definition,
    fields: definition.fields,
    maskedFields: new Set<string>(),
  }));
  if (options.secrets !== undefined) {
    if (options.requireEncrypted && options.secrets === "env") {
      problems.push({
        file: options.file,
        message:
          "-secrets env is refused under the encrypted-secrets policy; use sops:<path> or gcpsm:<project>",
      });
    } else {
      const source = await createSecretSource({
        spec: options.secrets,
        secretPrefix: options.secretPrefix,
        env: options.env,
      });
      const resolved = await resolvePlaceholders(loaded.providers, {
        source,
        env: options.env,
        requireEncrypted: options.requireEncrypted,
      });
      providers = resolved.providers;
      problems.push(...resolved.problems);
    }
  }
  for (const provider of providers) {
    problems.push(...registrationProblems(provider.definition, provider.fields));
  }
  return { providers, problems };
}

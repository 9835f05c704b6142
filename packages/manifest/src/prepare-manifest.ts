import {
  encryptedPolicyProblems,
  registrationProblems,
  webhookProblems,
} from "./manifest-checks.js";
import { loadManifest, type ManifestDefinition } from "./manifest-loader.js";
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
  /** Resolved the same way as providers: fields that held a placeholder stay masked. */
  webhooks: ResolvedProvider[];
  declaresWebhooks: boolean;
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
    for (const definition of loaded.webhooks)
      problems.push(...encryptedPolicyProblems(definition, "secret", "webhook"));
  }

  const unresolved = (definition: ManifestDefinition): ResolvedProvider => ({
    definition,
    fields: definition.fields,
    maskedFields: new Set<string>(),
  });
  let providers = loaded.providers.map(unresolved);
  let webhooks = loaded.webhooks.map(unresolved);
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
      const resolve = (definitions: ManifestDefinition[]) =>
        resolvePlaceholders(definitions, {
          source,
          env: options.env,
          requireEncrypted: options.requireEncrypted,
        });
      const resolved = await resolve(loaded.providers);
      providers = resolved.providers;
      problems.push(...resolved.problems);
      const resolvedWebhooks = await resolve(loaded.webhooks);
      webhooks = resolvedWebhooks.providers;
      problems.push(...resolvedWebhooks.problems);
    }
  }
  for (const provider of providers) {
    problems.push(...registrationProblems(provider.definition, provider.fields));
  }
  for (const webhook of webhooks) {
    problems.push(...webhookProblems(webhook.definition, webhook.fields));
  }
  return { providers, webhooks, declaresWebhooks: loaded.declaresWebhooks, problems };
}

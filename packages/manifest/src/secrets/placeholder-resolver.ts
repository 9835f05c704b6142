import type { ManifestProvider } from "../manifest-loader.js";
import type { ManifestProblem } from "../manifest-problem.js";
import type { ManifestRecord } from "../manifest-value.js";
import { expandPlaceholders, placeholderNames } from "../placeholders.js";
import type { SecretSource } from "./secret-source.js";

/** A provider with its placeholders expanded, and which fields held one (they stay masked). */
export interface ResolvedProvider {
  definition: ManifestProvider;
  fields: ManifestRecord;
  maskedFields: Set<string>;
}

export interface PlaceholderResolverOptions {
  source: SecretSource;
  env: NodeJS.ProcessEnv;
  /** The encrypted-secrets policy: no environment fallback, plaintext values refused. */
  requireEncrypted: boolean;
}

/** Expands every provider, reporting each unresolved or refused placeholder by name. */
export async function resolvePlaceholders(
  providers: ManifestProvider[],
  options: PlaceholderResolverOptions,
): Promise<{ providers: ResolvedProvider[]; problems: ManifestProblem[] }> {
  const { source, env, requireEncrypted } = options;
  const fallback = source.kind !== "env" && !requireEncrypted;
  const consulted = fallback ? `${source.label} nor the environment` : source.label;
  const problems: ManifestProblem[] = [];
  const resolved: ResolvedProvider[] = [];

  for (const definition of providers) {
    const values = new Map<string, string>();
    const maskedFields = new Set<string>();
    for (const [field, value] of Object.entries(definition.fields)) {
      const names = [...new Set(placeholderNames(value))];
      if (names.length > 0) maskedFields.add(field);
      const line = definition.fieldLines[field] ?? definition.line;
      for (const name of names) {
        if (values.has(name)) continue;
        const found = await source.lookup(name, definition.name);
        if (found && requireEncrypted && found.plaintext) {
          problems.push({
            file: definition.file,
            line,
            message: `secret ${name} in ${source.label} is stored in plaintext (never encrypted); refused by the encrypted-secrets policy`,
          });
          continue;
        }
        const value = found?.value ?? (fallback ? env[name] : undefined);
        if (value === undefined) {
          problems.push({
            file: definition.file,
            line,
            message: `unresolved placeholder \${${name}} in ${field}: not found in ${consulted}`,
          });
          continue;
        }
        values.set(name, value);
      }
    }
    const fields = expandPlaceholders(definition.fields, (name) =>
      values.get(name),
    ) as ManifestRecord;
    resolved.push({ definition, fields, maskedFields });
  }
  return { providers: resolved, problems };
}

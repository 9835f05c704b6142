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
  const problems: ManifestProblem[] = [];
  const resolved: ResolvedProvider[] = [];

  for (const definition of providers) {
    const fields: ManifestRecord = {};
    const maskedFields = new Set<string>();
    // Keyed by policy and name; null marks a placeholder already reported.
    const values = new Map<string, string | null>();
    for (const [field, value] of Object.entries(definition.fields)) {
      const names = [...new Set(placeholderNames(value))];
      if (names.length > 0) maskedFields.add(field);
      // params is not policed: its placeholders keep the environment fallback.
      const policed = requireEncrypted && field !== "params";
      const fallback = source.kind !== "env" && !policed;
      const line = definition.fieldLines[field] ?? definition.line;
      for (const name of names) {
        const key = `${policed}:${name}`;
        if (values.has(key)) continue;
        const found = await source.lookup(name, definition.name);
        if (found && policed && found.plaintext) {
          problems.push({
            file: definition.file,
            line,
            message: `secret ${name} in ${source.label} is stored in plaintext (never encrypted); refused by the encrypted-secrets policy`,
          });
          values.set(key, null);
          continue;
        }
        const resolvedValue = found?.value ?? (fallback ? env[name] : undefined);
        if (resolvedValue === undefined) {
          const consulted = fallback ? `${source.label} nor the environment` : source.label;
          problems.push({
            file: definition.file,
            line,
            message: `unresolved placeholder \${${name}} in ${field}: not found in ${consulted}`,
          });
        }
        values.set(key, resolvedValue ?? null);
      }
      fields[field] = expandPlaceholders(
        value,
        (name) => values.get(`${policed}:${name}`) ?? undefined,
      );
    }
    resolved.push({ definition, fields, maskedFields });
  }
  return { providers: resolved, problems };
}

import { type ProviderInput, validateProviderRegistration } from "@atrium/broker/rules";
import type { ManifestProvider } from "./manifest-loader.js";
import type { ManifestProblem } from "./manifest-problem.js";
import { isRecord, type ManifestRecord, type ManifestValue, NumberText } from "./manifest-value.js";
import { isSinglePlaceholder } from "./placeholders.js";

/**
 * The broker's own registration rules, each finding attributed to the file and line of the
 * field it is about. Unresolved placeholders count as present.
 */
export function registrationProblems(
  definition: ManifestProvider,
  fields: ManifestRecord,
): ManifestProblem[] {
  const findings = validateProviderRegistration(toPlain(fields) as ProviderInput, {
    placeholdersPresent: true,
  });
  return findings.map((finding) => {
    const field = finding.field.split(/[.[]/)[0];
    return {
      file: definition.file,
      line: definition.fieldLines[field] ?? definition.line,
      message: `provider "${definition.name}": ${finding.field} ${finding.message}`,
    };
  });
}

/** Under the encrypted-secrets policy a client secret may only come from a secret source. */
export function encryptedPolicyProblems(definition: ManifestProvider): ManifestProblem[] {
  const secret = definition.fields.client_secret;
  if (secret === undefined || isSinglePlaceholder(secret)) return [];
  return [
    {
      file: definition.file,
      line: definition.fieldLines.client_secret ?? definition.line,
      message: `provider "${definition.name}": client_secret must be exactly one \${PLACEHOLDER} under the encrypted-secrets policy`,
    },
  ];
}

function toPlain(value: ManifestValue): unknown {
  if (value instanceof NumberText) return Number(value.text);
  if (Array.isArray(value)) return value.map(toPlain);
  if (isRecord(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlain(v)]));
  return value;
}

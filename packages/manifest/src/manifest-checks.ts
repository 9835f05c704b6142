import {
  type ProviderInput,
  validateProviderRegistration,
  validateWebhookFields,
  WebhookFieldError,
  type WebhookFields,
} from "@atrium/broker/rules";
import type { ManifestProvider, ManifestWebhook } from "./manifest-loader.js";
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

/**
 * The broker's subscription rules, attributed to the field's line. The secret is required: one
 * the broker generated would be shown once, to atriumctl, and never reach the subscriber. URLs
 * are checked with http on loopback allowed; the broker applies its own setting.
 */
export function webhookProblems(
  definition: ManifestWebhook,
  fields: ManifestRecord,
): ManifestProblem[] {
  const problem = (field: string, message: string): ManifestProblem => ({
    file: definition.file,
    line: definition.fieldLines[field] ?? definition.line,
    message: `webhook "${definition.name}": ${message}`,
  });
  if (fields.secret === undefined || fields.secret === null || fields.secret === "") {
    return [problem("secret", "secret is required (whsec_ + base64, usually from a placeholder)")];
  }
  const plain = toPlain(fields) as WebhookFields;
  try {
    validateWebhookFields(
      // A placeholder not resolved yet (offline validate) stands for a valid secret.
      isSinglePlaceholder(fields.secret) ? { ...plain, secret: undefined } : plain,
      { allowHttpLoopback: true },
      true,
    );
  } catch (error) {
    if (!(error instanceof WebhookFieldError)) throw error;
    return [problem(error.field, error.message)];
  }
  return [];
}

/** Under the encrypted-secrets policy a secret may only come from a secret source. */
export function encryptedPolicyProblems(
  definition: ManifestProvider | ManifestWebhook,
  field: "client_secret" | "secret" = "client_secret",
  kind = "provider",
): ManifestProblem[] {
  const secret = definition.fields[field];
  if (secret === undefined || isSinglePlaceholder(secret)) return [];
  return [
    {
      file: definition.file,
      line: definition.fieldLines[field] ?? definition.line,
      message: `${kind} "${definition.name}": ${field} must be exactly one \${PLACEHOLDER} under the encrypted-secrets policy`,
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

import { createHash, randomBytes } from "node:crypto";
import { armor, Encrypter, identityToRecipient } from "age-encryption";
import { stringify } from "yaml";
import { encryptSopsValue, type SopsScalar, sopsBytes } from "../sops/sops-cipher.js";
import type { SopsFormat } from "../sops/sops-tree.js";

export interface SopsWriteOptions {
  /** Flat key/value secrets; keys ending in `_unencrypted` are stored as plaintext, as sops does. */
  values: Record<string, SopsScalar>;
  format: SopsFormat;
  identity: string;
}

const unencryptedSuffix = "_unencrypted";

/** Writes a file in the sops format for tests that need shapes the shared fixtures lack. */
export async function writeSopsFile(options: SopsWriteOptions): Promise<string> {
  const dataKey = randomBytes(32);
  const mac = createHash("sha512");
  const out: Record<string, SopsScalar> = {};
  for (const [key, value] of Object.entries(options.values)) {
    mac.update(sopsBytes(value));
    out[key] = key.endsWith(unencryptedSuffix)
      ? value
      : encryptSopsValue(value, dataKey, `${key}:`);
  }
  const encrypter = new Encrypter();
  encrypter.addRecipient(await identityToRecipient(options.identity));
  const enc = armor.encode(await encrypter.encrypt(dataKey));
  const lastmodified = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const macValue = encryptSopsValue(mac.digest("hex").toUpperCase(), dataKey, lastmodified);
  const sops = {
    age: [{ recipient: await identityToRecipient(options.identity), enc }],
    lastmodified,
    mac: macValue,
    unencrypted_suffix: unencryptedSuffix,
    version: "3.8.1",
  };
  if (options.format === "json") return `${JSON.stringify({ ...out, sops }, null, 2)}\n`;
  if (options.format === "yaml") return stringify({ ...out, sops });
  const lines = Object.entries(out).map(([k, v]) => `${k}=${String(v).replaceAll("\n", "\\n")}`);
  lines.push(`sops_age__list_0__map_enc=${enc.replaceAll("\n", "\\n")}`);
  lines.push(`sops_age__list_0__map_recipient=${sops.age[0].recipient}`);
  lines.push(`sops_lastmodified=${lastmodified}`, `sops_mac=${macValue}`);
  lines.push(`sops_unencrypted_suffix=${unencryptedSuffix}`, "sops_version=3.8.1");
  return `${lines.join("\n")}\n`;
}

import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** A leaf value as sops types it inside `ENC[...]`. */
export type SopsScalar = string | number | boolean;

const encPattern = /^ENC\[AES256_GCM,data:([^,]*),iv:([^,]+),tag:([^,]+),type:([a-z]+)\]$/;

/**
 * Decrypts one `ENC[AES256_GCM,...]` value. The additional data is the key path joined by `:`
 * with a trailing `:`, so a value moved to another key fails authentication.
 */
export function decryptSopsValue(
  ciphertext: string,
  dataKey: Uint8Array,
  additionalData: string,
): { value: SopsScalar; bytes: Buffer; type: string } {
  const match = encPattern.exec(ciphertext);
  if (!match) throw new Error("value is not in the sops ENC[AES256_GCM,...] format");
  const [, data, iv, tag, type] = match;
  const decipher = createDecipheriv("aes-256-gcm", dataKey, Buffer.from(iv, "base64"));
  decipher.setAAD(Buffer.from(additionalData, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64"));
  let bytes: Buffer;
  try {
    bytes = Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]);
  } catch {
    throw new Error("authentication failed (wrong key or tampered value)");
  }
  return { value: typedValue(bytes.toString("utf8"), type), bytes, type };
}

/** Encrypts one value the way sops does; used to write test files and kept beside its inverse. */
export function encryptSopsValue(
  value: SopsScalar,
  dataKey: Uint8Array,
  additionalData: string,
): string {
  const iv = randomBytes(32);
  const cipher = createCipheriv("aes-256-gcm", dataKey, iv);
  cipher.setAAD(Buffer.from(additionalData, "utf8"));
  const data = Buffer.concat([cipher.update(sopsBytes(value)), cipher.final()]);
  const type = typeof value === "string" ? "str" : typeof value === "boolean" ? "bool" : "float";
  return `ENC[AES256_GCM,data:${data.toString("base64")},iv:${iv.toString("base64")},tag:${cipher
    .getAuthTag()
    .toString("base64")},type:${type}]`;
}

/** The bytes sops feeds to its MAC and cipher for a plaintext value (Go's formatting rules). */
export function sopsBytes(value: SopsScalar): Buffer {
  if (typeof value === "boolean") return Buffer.from(value ? "True" : "False");
  if (typeof value === "number") return Buffer.from(goFloatText(value));
  return Buffer.from(value, "utf8");
}

function goFloatText(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  // strconv.FormatFloat(v, 'f', -1, 64) never uses an exponent.
  return value.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 });
}

function typedValue(text: string, type: string): SopsScalar {
  switch (type) {
    case "int":
      return Number.parseInt(text, 10);
    case "float":
      return Number.parseFloat(text);
    case "bool":
      return /^(1|t|true)$/i.test(text);
    default:
      return text;
  }
}

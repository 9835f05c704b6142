import { createHash, timingSafeEqual } from "node:crypto";
import { armor, Decrypter } from "age-encryption";
import { decryptSopsValue, type SopsScalar, sopsBytes } from "./sops-cipher.js";
import { type SopsFile, type SopsMetadata, type SopsTree, toPlain } from "./sops-tree.js";

/** A top-level key of a decrypted file: its value and what the file stores for it verbatim. */
export interface SopsEntry {
  value: unknown;
  stored: unknown;
}

export interface DecryptedSops {
  /** The whole document as sops would print it decrypted. */
  document: Record<string, unknown>;
  entries: Map<string, SopsEntry>;
}

/** Opens the data key with the first age identity that matches one of the file's recipients. */
export async function openDataKey(
  metadata: SopsMetadata,
  identities: string[],
): Promise<Uint8Array> {
  if (metadata.ageStanzas.length === 0) throw new Error("file has no age recipients");
  if (identities.length === 0) {
    throw new Error("no age identity: set SOPS_AGE_KEY or SOPS_AGE_KEY_FILE");
  }
  const decrypter = new Decrypter();
  for (const identity of identities) decrypter.addIdentity(identity);
  for (const stanza of metadata.ageStanzas) {
    try {
      const key = await decrypter.decrypt(armor.decode(stanza));
      if (key.length === 32) return key;
    } catch {
      // Another recipient's stanza; try the next one.
    }
  }
  throw new Error("no age identity matches the file's recipients");
}

/** Decrypts every value in memory and refuses the file unless its MAC matches. */
export async function decryptSops(file: SopsFile, identities: string[]): Promise<DecryptedSops> {
  const dataKey = await openDataKey(file.metadata, identities);
  const shouldEncrypt = encryptionRule(file.metadata);
  const mac = createHash("sha512");

  const walk = (node: SopsTree, path: string[]): SopsTree => {
    if (node.kind === "map") {
      return { kind: "map", entries: node.entries.map(([k, v]) => [k, walk(v, [...path, k])]) };
    }
    if (node.kind === "list") return { kind: "list", items: node.items.map((n) => walk(n, path)) };
    if (node.value === null) return node;
    const encrypted = shouldEncrypt(path);
    let value: SopsScalar;
    let bytes: Buffer;
    if (encrypted) {
      if (typeof node.value !== "string")
        throw new Error(`${path.join(".")}: value is not encrypted`);
      try {
        ({ value, bytes } = decryptSopsValue(node.value, dataKey, `${path.join(":")}:`));
      } catch (error) {
        throw new Error(`${path.join(".")}: ${(error as Error).message}`);
      }
    } else {
      value = node.value;
      bytes = sopsBytes(value);
    }
    if (encrypted || !file.metadata.macOnlyEncrypted) mac.update(bytes);
    return { kind: "leaf", value };
  };

  const decrypted = walk(file.tree, []) as Extract<SopsTree, { kind: "map" }>;
  verifyMac(file.metadata, dataKey, mac.digest("hex").toUpperCase());

  const entries = new Map<string, SopsEntry>();
  file.tree.entries.forEach(([key, stored], i) => {
    entries.set(key, { value: toPlain(decrypted.entries[i][1]), stored: toPlain(stored) });
  });
  return { document: toPlain(decrypted) as Record<string, unknown>, entries };
}

function verifyMac(metadata: SopsMetadata, dataKey: Uint8Array, computed: string): void {
  let stored: string;
  try {
    stored = String(decryptSopsValue(metadata.mac, dataKey, metadata.lastModified).value);
  } catch {
    throw new Error("MAC cannot be authenticated: the file has been tampered with");
  }
  const a = Buffer.from(stored);
  const b = Buffer.from(computed);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new Error("MAC mismatch: the file has been tampered with");
  }
}

/** sops's rules for which key paths hold encrypted values. */
function encryptionRule(metadata: SopsMetadata): (path: string[]) => boolean {
  const unencryptedRegex = metadata.unencryptedRegex ? new RegExp(metadata.unencryptedRegex) : null;
  const encryptedRegex = metadata.encryptedRegex ? new RegExp(metadata.encryptedRegex) : null;
  return (path) => {
    let encrypted = true;
    const { unencryptedSuffix, encryptedSuffix } = metadata;
    if (unencryptedSuffix && path.some((p) => p.endsWith(unencryptedSuffix))) encrypted = false;
    if (encryptedSuffix) encrypted = path.some((p) => p.endsWith(encryptedSuffix));
    if (unencryptedRegex && path.some((p) => unencryptedRegex.test(p))) encrypted = false;
    if (encryptedRegex) encrypted = path.some((p) => encryptedRegex.test(p));
    return encrypted;
  };
}

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { generateX25519Identity } from "age-encryption";
import { ageTestKeyFile, sopsFixturesDir } from "../testing/paths.js";
import { writeSopsFile } from "../testing/sops-writer.js";
import { decryptSops } from "./sops-decrypt.js";
import { parseSopsFile, type SopsFormat } from "./sops-tree.js";

const identity = readFileSync(ageTestKeyFile, "utf8")
  .split("\n")
  .find((line) => line.startsWith("AGE-SECRET-KEY-"))!;
const fixture = (name: string) => readFileSync(join(sopsFixturesDir, name), "utf8");
const open = (text: string, format: SopsFormat) =>
  decryptSops(parseSopsFile(text, format), [identity]);

describe("sops files written by sops 3.8.1", () => {
  it("decrypts the YAML fixture", async () => {
    const { document } = await open(fixture("secret.enc.yaml"), "yaml");
    assert.deepEqual(document, { secret: "this is a secret" });
  });

  it("decrypts the JSON fixture with its types", async () => {
    const { document } = await open(fixture("secret.enc.json"), "json");
    assert.deepEqual(document, {
      secret: "this is a secret",
      string: "string",
      int: 7,
      float: 3.14,
      boolean: true,
      complex: { value: "this is a secret", array: ["one", "two", "three"] },
    });
  });

  it("refuses a copy whose array items were reordered (MAC mismatch)", async () => {
    const doc = JSON.parse(fixture("secret.enc.json"));
    doc.complex.array.reverse();
    await assert.rejects(open(JSON.stringify(doc), "json"), /MAC mismatch: .*tampered/);
  });

  it("refuses a copy with a value removed", async () => {
    const doc = JSON.parse(fixture("secret.enc.json"));
    delete doc.string;
    await assert.rejects(open(JSON.stringify(doc), "json"), /tampered/);
  });

  it("refuses a copy whose ciphertext was altered", async () => {
    const text = fixture("secret.enc.yaml").replace("data:hxKQ", "data:hxKR");
    await assert.rejects(open(text, "yaml"), /secret: authentication failed/);
  });

  it("refuses a copy whose MAC was replaced", async () => {
    const text = fixture("secret.enc.yaml").replace(
      /mac: ENC\[AES256_GCM,data:kHA6/,
      "mac: ENC[AES256_GCM,data:kHA7",
    );
    await assert.rejects(open(text, "yaml"), /tampered/);
  });

  it("refuses a file no identity can open", async () => {
    const other = await generateX25519Identity();
    await assert.rejects(
      decryptSops(parseSopsFile(fixture("secret.enc.yaml"), "yaml"), [other]),
      /no age identity matches/,
    );
  });
});

describe("sops dotenv files", () => {
  it("round-trips values with newlines and keeps unencrypted ones verbatim", async () => {
    const text = await writeSopsFile({
      format: "dotenv",
      identity,
      values: { API_TOKEN: "line1\nline2", NOTE_unencrypted: "plain" },
    });
    assert.match(text, /^API_TOKEN=ENC\[AES256_GCM/m);
    const { entries } = await open(text, "dotenv");
    assert.equal(entries.get("API_TOKEN")?.value, "line1\nline2");
    assert.deepEqual(entries.get("NOTE_unencrypted"), { value: "plain", stored: "plain" });
  });

  it("refuses an edited dotenv file", async () => {
    const text = await writeSopsFile({
      format: "dotenv",
      identity,
      values: { A: "1", B_unencrypted: "x" },
    });
    await assert.rejects(
      open(text.replace("B_unencrypted=x", "B_unencrypted=y"), "dotenv"),
      /tampered/,
    );
  });
});

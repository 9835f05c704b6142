import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { describe, it } from "node:test";

const root = new URL("../../", import.meta.url).pathname;
const documents = readdirSync(`${root}openapi`).map((name) => `openapi/${name}`);

/** Redocly's problems with one document; it exits non-zero on errors, so stdout is read either way. */
function lint(document: string): string[] {
  let output: string;
  try {
    output = execFileSync(`${root}node_modules/.bin/redocly`, ["lint", "--format=json", document], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch (error) {
    output = (error as { stdout: string }).stdout;
  }
  const { problems } = JSON.parse(output) as {
    problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
  };
  return problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
}

describe("the committed OpenAPI documents", () => {
  it("pass Redocly's recommended rules (redocly.yaml) with no error and no warning", () => {
    for (const document of [
      "memory.v1",
      "broker.v1",
      "gateway.v1",
      "chat",
      "memory.operator",
      "gateway.operator",
    ]) {
      assert.ok(documents.includes(`openapi/${document}.openapi.json`), `${document} is linted`);
    }
    for (const document of documents) assert.deepEqual(lint(document), [], document);
  });
});

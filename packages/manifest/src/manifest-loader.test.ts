// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadManifest, parseManifestFile } from "./manifest-loader.js";
import { formatProblem } from "./manifest-problem.js";
import { NumberText } from "./manifest-value.js";

const messages = (source: string) =>
  parseManifestFile("m.yaml", source).problems.map(formatProblem);

describe("strict manifest files", () => {
  it("reads providers with field lines and exact number text", () => {
    const { providers, problems } = parseManifestFile(
      "m.yaml",
      "# comment ${NOT_A_PLACEHOLDER}\nproviders:\n  - name: github\n    auth_type: oauth2\n    params:\n      timeout: 1.50\n",
    );
    assert.deepEqual(problems, []);
    assert.equal(providers[0].name, "github");
    assert.equal(providers[0].line, 3);
    assert.equal(providers[0].fieldLines.auth_type, 4);
    assert.deepEqual(providers[0].fields.params, { timeout: new NumberText("1.50") });
  });

  it("rejects a root without providers, with its line", () => {
    assert.deepEqual(messages("\nprovider:\n  - name: a\n"), [
      'm.yaml:2: unknown root key "provider"',
      'm.yaml:2: manifest root has no "providers" or "webhooks" key',
    ]);
  });

  it("rejects an unknown provider field at its line", () => {
    assert.deepEqual(messages("providers:\n  - name: a\n    auth_type: api_key\n    secret: x\n"), [
      'm.yaml:4: unknown provider field "secret"',
    ]);
  });

  it("rejects an empty file and a comment-only file", () => {
    assert.deepEqual(messages(""), ["m.yaml:1: file is empty"]);
    assert.deepEqual(messages("# nothing\n"), ["m.yaml:1: file is empty"]);
  });

  it("rejects more than one YAML document, pointing at the second", () => {
    assert.deepEqual(messages("providers: []\n---\nproviders: []\n"), [
      "m.yaml:2: expected one YAML document, found 2",
    ]);
  });

  it("rejects duplicate names and duplicate keys", () => {
    assert.deepEqual(messages("providers:\n  - name: a\n  - name: a\n"), [
      'm.yaml:3: duplicate provider name "a" (first defined at m.yaml:2)',
    ]);
    assert.match(
      messages("providers:\n  - name: a\n    name: b\n")[0],
      /^m\.yaml:3: Map keys must be unique/,
    );
  });

  it("rejects a non-mapping provider", () => {
    assert.deepEqual(messages("providers:\n  - just-a-string\n"), [
      "m.yaml:2: provider definition must be a mapping",
    ]);
  });
});

describe("directory manifests", () => {
  async function dir(files: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), "atrium-manifest-"));
    await mkdir(root, { recursive: true });
    for (const [name, text] of Object.entries(files)) await writeFile(join(root, name), text);
    return root;
  }

  it("assembles one provider per file in file-name order", async () => {
    const root = await dir({
      "b.yaml": "name: b\nauth_type: api_key\n",
      "a.yaml": "name: a\nauth_type: api_key\n",
      "notes.txt": "ignored",
    });
    const { providers, problems } = await loadManifest(root);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      providers.map((p) => p.name),
      ["a", "b"],
    );
  });

  it("rejects a file name that differs from its provider, and a non-mapping file", async () => {
    const root = await dir({
      "a.yaml": "name: b\n",
      "c.yaml": "- c\n",
      "d.yaml": "",
      "e.yml": "name: e\n",
    });
    const { problems } = await loadManifest(root);
    assert.deepEqual(problems.map(formatProblem), [
      `${join(root, "e.yml")}: provider files are named <name>.yaml`,
      `${join(root, "a.yaml")}:1: file name "a.yaml" does not match provider name "b"`,
      `${join(root, "c.yaml")}:1: provider definition must be a mapping`,
      `${join(root, "d.yaml")}:1: file is empty`,
    ]);
  });
});

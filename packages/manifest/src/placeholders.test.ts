// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseManifestFile } from "./manifest-loader.js";
import { expandPlaceholders, isSinglePlaceholder, placeholderNames } from "./placeholders.js";

describe("placeholders", () => {
  it("are found and expanded in string values only, nested params included", () => {
    const { providers } = parseManifestFile(
      "m.yaml",
      [
        "# ${IN_COMMENT} stays a comment",
        "providers:",
        "  - name: a",
        "    client_id: id-${CLIENT}",
        "    params:",
        "      ${KEY_NAME}: ${PARAM_VALUE}",
        '      nested: "x ${PARAM_VALUE} y"',
        "",
      ].join("\n"),
    );
    const fields = providers[0].fields;
    assert.deepEqual(placeholderNames(fields.client_id), ["CLIENT"]);
    assert.deepEqual(placeholderNames(fields.params), ["PARAM_VALUE", "PARAM_VALUE"]);
    const values: Record<string, string> = { CLIENT: "c1", PARAM_VALUE: "v", KEY_NAME: "no" };
    const expanded = expandPlaceholders(fields, (name) => values[name]);
    assert.deepEqual(expanded, {
      name: "a",
      client_id: "id-c1",
      params: { "${KEY_NAME}": "v", nested: "x v y" },
    });
  });

  it("leaves unknown placeholders as written", () => {
    assert.equal(
      expandPlaceholders("${A}-${B}", (n) => (n === "A" ? "1" : undefined)),
      "1-${B}",
    );
  });

  it("recognises a value that is exactly one placeholder", () => {
    assert.equal(isSinglePlaceholder("${GITHUB_SECRET}"), true);
    assert.equal(isSinglePlaceholder("${A}${B}"), false);
    assert.equal(isSinglePlaceholder("x${A}"), false);
    assert.equal(isSinglePlaceholder("plain"), false);
  });
});

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${PLACEHOLDER} text is manifest syntax, not a template
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LiveProvider } from "./broker-client.js";
import { secretFingerprint } from "./fingerprint.js";
import { parseManifestFile } from "./manifest-loader.js";
import { NumberText } from "./manifest-value.js";
import { computePlan } from "./plan.js";
import { renderPlan } from "./plan-render.js";
import type { ResolvedProvider } from "./secrets/placeholder-resolver.js";

function desired(yaml: string, masked: Record<string, string[]> = {}): ResolvedProvider[] {
  return parseManifestFile("m.yaml", `providers:\n${yaml}`).providers.map((definition) => ({
    definition,
    fields: definition.fields,
    maskedFields: new Set(masked[definition.name] ?? []),
  }));
}

const live = (name: string, fields: LiveProvider["fields"]): LiveProvider => ({
  id: `id-${name}`,
  name,
  fields: { id: `id-${name}`, name, ...fields },
});

describe("plan", () => {
  it("creates, updates and prunes in name order, and lists orphans without -prune", () => {
    const wanted = desired(
      "  - name: zeta\n    auth_type: api_key\n  - name: beta\n    auth_type: api_key\n    category: new\n  - name: alpha\n    auth_type: api_key\n    category: new\n",
    );
    const current = [
      live("orphan-b", {}),
      live("beta", { auth_type: "api_key", category: "old" }),
      live("alpha", { auth_type: "api_key", category: "old" }),
      live("orphan-a", {}),
    ];
    const kept = computePlan(wanted, current, { prune: false });
    assert.deepEqual(
      kept.changes.map((c) => `${c.action} ${c.name}`),
      ["create zeta", "update alpha", "update beta"],
    );
    assert.deepEqual(kept.orphans, ["orphan-a", "orphan-b"]);
    const pruned = computePlan(wanted, current, { prune: true });
    assert.deepEqual(pruned.changes.map((c) => `${c.action} ${c.name}`).slice(3), [
      "delete orphan-a",
      "delete orphan-b",
    ]);
  });

  it("compares numbers by exact text and treats a missing list as empty", () => {
    const wanted = desired(
      "  - name: a\n    scopes: []\n    params:\n      timeout: 1.50\n      retries: 3\n",
    );
    const same = computePlan(
      wanted,
      [live("a", { params: { timeout: "1.50", retries: new NumberText("3") } })],
      {
        prune: false,
      },
    );
    assert.deepEqual(same.changes, []);
    const changed = computePlan(wanted, [live("a", { params: { timeout: "1.5", retries: "3" } })], {
      prune: false,
    });
    const update = changed.changes[0];
    assert.equal(update.action, "update");
    if (update.action !== "update") return;
    assert.deepEqual(
      update.fields.map((f) => f.field),
      ["params.timeout"],
    );
    assert.deepEqual(update.body, {
      params: { timeout: new NumberText("1.50"), retries: new NumberText("3") },
    });
  });

  it("leaves omitted description and category alone and clears them with an empty string", () => {
    const current = [live("a", { description: "keep", category: "drop" })];
    const plan = computePlan(desired('  - name: a\n    category: ""\n'), current, { prune: false });
    const update = plan.changes[0];
    assert.ok(update.action === "update");
    assert.deepEqual(update.body, { category: "" });
  });

  it("compares client_secret by fingerprint and skips it when the broker has none", () => {
    const wanted = desired("  - name: a\n    client_secret: s3cret\n");
    const matching = live("a", { client_secret_fingerprint: secretFingerprint("s3cret") });
    assert.deepEqual(computePlan(wanted, [matching], { prune: false }).changes, []);
    assert.deepEqual(computePlan(wanted, [live("a", {})], { prune: false }).changes, []);
    const rotated = computePlan(
      wanted,
      [live("a", { client_secret_fingerprint: "0000000000000000" })],
      {
        prune: false,
      },
    );
    const update = rotated.changes[0];
    assert.ok(update.action === "update");
    assert.deepEqual(update.body, { client_secret: "s3cret" });
  });

  it("masks params values and placeholder fields on both sides and never prints resolved values", () => {
    const wanted = desired(
      "  - name: a\n    client_id: resolved-client\n    description: visible\n    params:\n      prompt: consent\n",
      {
        a: ["client_id"],
      },
    );
    const current = [
      live("a", { client_id: "old-client", description: "was", params: { prompt: "login" } }),
    ];
    const text = renderPlan(computePlan(wanted, current, { prune: false }));
    assert.equal(
      text,
      [
        "  ~ a (m.yaml): update",
        "      ~ client_id: (masked) -> (masked)",
        '      ~ description: "was" -> "visible"',
        "      ~ params.prompt: (masked) -> (masked)",
        "",
        "Plan: 0 to add, 1 to change, 0 to delete.",
        "",
      ].join("\n"),
    );
    assert.doesNotMatch(text, /resolved-client|old-client|consent|login/);
  });
});

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type McpStack, startMcpStack } from "./mcp-e2e-harness.js";

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, a dev dependency) run
 * against the gateway's /mcp for each requirement set Atrium claims, 2026-07-28 and 2025-11-25.
 * Any failing check must be in test/mcp-conformance-baseline.json (scenarios that need the
 * suite's own fixture tools, resources and prompts, each with why), and every entry there must
 * still fail. The suite needs Node 22: the binary comes from npm's `node` package, so a fresh
 * clone runs this offline after `npm ci`.
 */

const root = new URL("..", import.meta.url).pathname;
const node22 = join(root, "node_modules/node/bin/node");
const suite = join(root, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const revisions = ["2026-07-28", "2025-11-25"] as const;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "SKIPPED" | "INFO";
  errorMessage?: string;
}

let stack: McpStack;
let proxy: Server;
let mcpUrl: string;

before(async () => {
  assert.ok(
    existsSync(node22),
    `${node22} is missing: npm's node package fetches it in its preinstall script (npm ci without --ignore-scripts)`,
  );
  // The suite sends no credentials; a loopback proxy adds a scoped key, as a client's own
  // configuration would. Its origin is allowed the way an operator allows a reverse proxy's.
  let gateway: URL | undefined;
  let key = "";
  proxy = createServer((req, res) => {
    const target = gateway as URL;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, "x-api-key": key },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const port = (proxy.address() as AddressInfo).port;
  stack = await startMcpStack({
    logLevel: "info",
    gatewayEnv: { MCP_ALLOWED_ORIGINS: `http://localhost:${port},http://127.0.0.1:${port}` },
  });
  gateway = new URL(stack.gatewayUrl);
  key = stack.keys.alice;
  mcpUrl = `http://127.0.0.1:${port}/mcp`;
});

after(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await stack?.stop();
});

/** Runs one requirement set; every check by scenario, from the suite's checks.json files. */
async function runSuite(
  revision: string,
): Promise<{ checks: Map<string, Check[]>; total: string }> {
  const out = await mkdtemp(join(tmpdir(), "mcp-conformance-"));
  try {
    const args = [suite, "server", "--url", mcpUrl, "--requirements", revision, "-o", out];
    const child = spawn(node22, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    await new Promise((resolve) => child.on("close", resolve));
    const checks = new Map<string, Check[]>();
    for (const dir of await readdir(out)) {
      // server-<scenario>-<ISO timestamp>
      const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
      const file = join(out, dir, "checks.json");
      checks.set(scenario, JSON.parse(await readFile(file, "utf8")) as Check[]);
    }
    assert.ok(checks.size > 0, `the suite ran no scenario:\n${output}`);
    return { checks, total: /^Total: .*$/m.exec(output)?.[0] ?? "no total" };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

const baseline = JSON.parse(
  await readFile(new URL("./mcp-conformance-baseline.json", import.meta.url), "utf8"),
) as Record<string, Record<string, string>>;

for (const revision of revisions) {
  test(`MCP conformance, ${revision} requirements: every failure is a baselined fixture scenario`, async (t) => {
    const { checks, total } = await runSuite(revision);
    const allowed = baseline[revision] ?? {};
    const failing = [...checks].flatMap(([scenario, list]) =>
      list
        .filter((check) => check.status === "FAILURE")
        .map((check) => ({ scenario, id: check.id, message: check.errorMessage ?? "" })),
    );
    const excused = (f: { scenario: string; id: string }) =>
      f.scenario in allowed || `${f.scenario}:${f.id}` in allowed;
    const unexpected = failing.filter((f) => !excused(f));
    const stale = Object.keys(allowed).filter(
      (entry) => !failing.some((f) => entry === f.scenario || entry === `${f.scenario}:${f.id}`),
    );
    const all = [...checks.values()].flat();
    const passed = all.filter((check) => check.status === "SUCCESS").length;
    const failed = all.filter((check) => check.status === "FAILURE").length;
    t.diagnostic(`${revision}: the suite's ${total}; ${passed} checks passed, ${failed} failed`);
    assert.deepEqual(
      unexpected.map((f) => `${f.scenario}:${f.id}: ${f.message}`),
      [],
      "failing checks not in test/mcp-conformance-baseline.json",
    );
    assert.deepEqual(stale, [], "baseline entries that pass now: remove them");
  });
}

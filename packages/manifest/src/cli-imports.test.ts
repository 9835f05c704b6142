import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { repoRoot } from "./testing/paths.js";

/** Module hooks that name every module resolved from the broker's server side. */
const loaderHooks = `
const server = /fastify|@grpc[/]grpc-js|@connectrpc[/]connect-node|samlify|node-saml|broker[/]src[/]service[/]/;
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (server.test(resolved.url)) process.stderr.write("SERVER MODULE " + resolved.url + "\\n");
  return resolved;
}
`;

test("validate runs the broker's rules without loading the broker server", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "atriumctl-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, "atrium.yaml");
  await writeFile(join(dir, "hooks.mjs"), loaderHooks);
  await writeFile(
    join(dir, "register.mjs"),
    'import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n',
  );
  await writeFile(
    file,
    [
      "providers:",
      "  - name: github",
      "    auth_type: oauth2",
      "    client_id: abc",
      `    client_secret: \${GITHUB_SECRET}`,
      "    auth_url: https://github.com/login/oauth/authorize",
      "    token_url: https://github.com/login/oauth/access_token",
      "",
    ].join("\n"),
  );
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>(
    (resolve, reject) =>
      execFile(
        process.execPath,
        [
          "--conditions=atrium-source",
          "--import",
          "tsx",
          "--import",
          join(dir, "register.mjs"),
          join(repoRoot, "packages", "manifest", "src", "main.ts"),
          "validate",
          "-file",
          file,
        ],
        { cwd: repoRoot, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
        (error, out, err) =>
          error ? reject(new Error(err || error.message)) : resolve({ stdout: out, stderr: err }),
      ),
  );
  assert.match(stdout, /valid/i);
  assert.doesNotMatch(stderr, /SERVER MODULE/);
});

import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A fresh temporary directory holding `files` (paths relative to it). */
export async function writeTempFiles(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "atriumctl-"));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

/** An oauth2 provider file whose client_secret is the placeholder `${<NAME>_SECRET}`. */
export function oauthProviderYaml(name: string, extra = ""): string {
  const placeholder = `\${${name.toUpperCase().replaceAll("-", "_")}_SECRET}`;
  return [
    `name: ${name}`,
    "auth_type: oauth2",
    `client_id: ${name}-client`,
    `client_secret: ${placeholder}`,
    `auth_url: https://${name}.example.com/auth`,
    `token_url: https://${name}.example.com/token`,
    extra,
  ].join("\n");
}

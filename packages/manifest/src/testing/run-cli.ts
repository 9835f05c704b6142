import { execFile } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./paths.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs atriumctl from its sources as a child process, the way a user runs the binary. */
export function runAtriumctl(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const main = join(repoRoot, "packages", "manifest", "src", "main.ts");
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--conditions=atrium-source", "--import", "tsx", main, ...args],
      {
        cwd: repoRoot,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

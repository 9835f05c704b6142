import type { ProgressStream } from "./progress.js";

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: ProgressStream;
  stderr: ProgressStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** Exit codes follow `terraform plan -detailed-exitcode`: 0 no changes, 2 changes, 1 error. */
export const exitCodes = { ok: 0, error: 1, changes: 2 } as const;

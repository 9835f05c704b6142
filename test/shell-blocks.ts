import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { freePortOffset, spawnAtriumStart } from "./atrium-start-env.js";

// The shell blocks of README.md and docs/*.md are a newcomer's first test: each `sh` block runs
// as pasted, in order, against `atrium start` with embedded defaults, from a directory that looks
// like the clone (the repository's files, `data/` being the start's data directory). The fence's
// info string after `sh` says how:
// - `norun (why)`: not run, and the reason is required (a service started in the foreground, a
//   cluster, Docker, the network);
// - `background`: a stream followed in "another terminal", run beside the next block;
// - `errors`: the block shows error answers, so it runs without `set -e` and may print them.
// Two liberties: the platform listens at a free ATRIUM_PORT_OFFSET, so the default ports in a
// block are moved by it before it runs (a running `make start` is never in the way), and the
// variables a block sets stay set for the next blocks of the same file, as in one terminal.
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const defaultPorts = [8000, 8080, 8081, 8082, 9090, 9091, 9092];

export interface Block {
  file: string;
  line: number;
  info: string[];
  text: string;
}

/** The fenced `sh` blocks; a fence closes only on a line of backticks alone. */
export async function shBlocks(file: string): Promise<Block[]> {
  const markdown = await readFile(join(repoRoot, file), "utf8");
  const blocks: Block[] = [];
  let open: Block | undefined;
  for (const [i, line] of markdown.split("\n").entries()) {
    if (open) {
      if (/^```\s*$/.test(line)) {
        blocks.push(open);
        open = undefined;
      } else open.text += `${line}\n`;
      continue;
    }
    const fence = /^```(\S+)(.*)$/.exec(line);
    if (fence?.[1] === "sh") {
      open = { file, line: i + 1, info: fence[2].trim().split(/\s+/), text: "" };
    }
  }
  return blocks;
}

/** A block not run must say why: `sh norun (reason)`. */
export function notRun(block: Block): boolean {
  if (block.info[0] !== "norun") return false;
  assert.match(
    block.info.slice(1).join(" "),
    /^\(.{8,}\)$/,
    `${block.file}:${block.line}: norun needs a reason in parentheses`,
  );
  return true;
}

export interface Platform {
  /** A directory that looks like the clone, with `data/` the start's data directory. */
  clone: string;
  offset: number;
}

/** `atrium start` on a free port offset, and a clone-like directory to run blocks from. */
export async function startPlatform(t: TestContext): Promise<Platform> {
  const offset = await freePortOffset(0, 1);
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-blocks-data-"));
  const clone = await mkdtemp(join(tmpdir(), "atrium-blocks-clone-"));
  t.after(() => rm(dataDir, { recursive: true, force: true }));
  t.after(() => rm(clone, { recursive: true, force: true }));
  for (const entry of await readdir(repoRoot)) {
    if (entry !== "data") await symlink(join(repoRoot, entry), join(clone, entry));
  }
  await symlink(dataDir, join(clone, "data"));
  const atrium = await spawnAtriumStart({
    ATRIUM_DATA_DIR: dataDir,
    ATRIUM_PORT_OFFSET: String(offset),
    LOG_LEVEL: "warn",
  });
  t.after(() => atrium.stop());
  return { clone, offset };
}

interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** The variables bash has before a block runs: what a block leaves is the rest. */
const shellVariables = [
  ...execFileSync("bash", ["-c", "compgen -v"], { encoding: "utf8" }).split("\n"),
  "name",
]
  .filter(Boolean)
  .join(" ");

function start(block: Block, platform: Platform, state: string): Running {
  const body = block.text.replace(/\b(localhost|127\.0\.0\.1):(\d{4})\b/g, (match, host, port) =>
    defaultPorts.includes(Number(port)) ? `${host}:${Number(port) + platform.offset}` : match,
  );
  const script = [
    `[ -f '${state}' ] && . '${state}'`,
    `trap 'for name in $(compgen -v); do case " ${shellVariables} " in *" $name "*) ;; *) declare -p "$name";; esac; done > "${state}"' EXIT`,
    block.info.includes("errors") ? "" : "set -e",
    body,
  ].join("\n");
  const child = spawn("bash", ["-o", "pipefail", "-c", script], {
    cwd: platform.clone,
    env: { ...process.env, ATRIUM_PORT_OFFSET: undefined },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  return { child, output: () => output, exited };
}

function stop(child: ChildProcess) {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // already gone
  }
}

/** What a block must print (by a text the block contains), beyond running without an error. */
export type Expectations = [marker: string, patterns: RegExp[]][];

// An error body, not a schema describing one (`"error":{"type":…}`).
const errorAnswer = /\{"code":"[A-Z]\w+","message":|\{"error":"/;

function check(block: Block, output: string, expectations: Expectations) {
  const where = `${block.file}:${block.line}\n${block.text}\n--- printed:\n${output}`;
  if (!block.info.includes("errors")) assert.doesNotMatch(output, errorAnswer, where);
  for (const [marker, patterns] of expectations) {
    if (!block.text.includes(marker)) continue;
    for (const pattern of patterns) assert.match(output, pattern, where);
  }
}

/** Runs one file's runnable blocks in order, sharing what they export, as one terminal. */
export async function runBlocks(
  blocks: Block[],
  platform: Platform,
  expectations: Expectations,
): Promise<void> {
  const state = join(await mkdtemp(join(tmpdir(), "atrium-blocks-state-")), "exports.sh");
  const background: { block: Block; running: Running }[] = [];
  for (const block of blocks) {
    const running = start(block, platform, state);
    if (block.info.includes("background")) {
      background.push({ block, running });
      // The follower is connected before the next block acts, as in a second terminal.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    const timer = setTimeout(() => stop(running.child), 120_000);
    const code = await running.exited;
    clearTimeout(timer);
    const where = `${block.file}:${block.line}`;
    if (!block.info.includes("errors")) {
      assert.equal(code, 0, `${where} exited ${code}:\n${running.output()}`);
    }
    check(block, running.output(), expectations);
    for (const follower of background.splice(0)) {
      // A stream ends after its step_complete; one that does not is cut after a while.
      const timeout = setTimeout(() => stop(follower.running.child), 10_000);
      await follower.running.exited;
      clearTimeout(timeout);
      check(follower.block, follower.running.output(), expectations);
    }
  }
  await rm(dirname(state), { recursive: true, force: true });
  assert.equal(background.length, 0, "a background block is followed by the block it watches");
}

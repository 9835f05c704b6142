import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { freePortOffset, spawnAtriumStart } from "./atrium-start-env.js";

// README.md is a newcomer's first test: every `sh` block runs as pasted, in order, against
// `atrium start` with embedded defaults, from a directory that looks like the clone (the
// repository's files, `data/` being the start's data directory). Two liberties: the platform
// listens at a free ATRIUM_PORT_OFFSET, so the default ports in a block are moved by it before it
// runs (a running `make start` is never in the way), and a block marked `sh background` (a
// stream followed in "another terminal") runs beside the next one. Blocks marked
// `sh skip-in-readme-test` are not run: `make start` itself and other long-running commands.
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const defaultPorts = [8000, 8080, 8081, 8082, 9090, 9091, 9092];

interface Block {
  line: number;
  info: string[];
  text: string;
}

/** The fenced `sh` blocks; a fence closes only on a line of backticks alone. */
function shBlocks(markdown: string): Block[] {
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
    if (fence?.[1] === "sh") open = { line: i + 1, info: fence[2].trim().split(/\s+/), text: "" };
  }
  return blocks;
}

/** What a block must print, beyond running without an error answer. */
const expectations: [string, RegExp[]][] = [
  // Both searches find the stored turn: by its words, and in other words.
  ["context/search", [/("results":\[\{"content":"[^"]*Lisbon[\s\S]*){2}/]],
  ["buf curl", [/"status": "healthy"/]],
  ["chat/stream", [/"type":"step_complete"/]],
  ["ANSWER=", [/"status":"success"/, /"answer":"\[ ?1, ?2, ?3 ?\]"/, /"events":\[/]],
  ["/providers", [/"name":"github"/, /"event_type":"provider\.created"/]],
];

const errorAnswer = /\{"code":"[A-Z]\w+","message":|\{"error":/;

function run(block: Block, cwd: string, offset: number) {
  const script = block.text.replace(/\b(localhost|127\.0\.0\.1):(\d{4})\b/g, (match, host, port) =>
    defaultPorts.includes(Number(port)) ? `${host}:${Number(port) + offset}` : match,
  );
  const child = spawn("bash", ["-eo", "pipefail", "-c", script], {
    cwd,
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

function check(block: Block, output: string) {
  const where = `README.md:${block.line}\n${block.text}\n--- printed:\n${output}`;
  assert.doesNotMatch(output, errorAnswer, where);
  for (const [marker, patterns] of expectations) {
    if (!block.text.includes(marker)) continue;
    for (const pattern of patterns) assert.match(output, pattern, where);
  }
}

test("every sh block of README.md runs as pasted against atrium start", async (t) => {
  const blocks = shBlocks(await readFile(join(repoRoot, "README.md"), "utf8"));
  const runnable = blocks.filter((block) => !block.info.includes("skip-in-readme-test"));
  assert.ok(runnable.length >= 5, "README's walkthrough blocks are found");
  assert.ok(blocks.length - runnable.length <= 5, "skipped blocks stay few");

  const offset = await freePortOffset(0, 1);
  const dataDir = await mkdtemp(join(tmpdir(), "atrium-readme-data-"));
  const clone = await mkdtemp(join(tmpdir(), "atrium-readme-clone-"));
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

  const background: { block: Block; running: ReturnType<typeof run> }[] = [];
  for (const block of runnable) {
    const running = run(block, clone, offset);
    if (block.info.includes("background")) {
      background.push({ block, running });
      // The follower is connected before the next block acts, as in a second terminal.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    const timer = setTimeout(() => stop(running.child), 120_000);
    const code = await running.exited;
    clearTimeout(timer);
    assert.equal(code, 0, `README.md:${block.line} exited ${code}:\n${running.output()}`);
    check(block, running.output());
    for (const follower of background.splice(0)) {
      // A stream ends after its step_complete; one that does not is cut after a while.
      const timeout = setTimeout(() => stop(follower.running.child), 10_000);
      await follower.running.exited;
      clearTimeout(timeout);
      check(follower.block, follower.running.output());
    }
  }
  assert.equal(background.length, 0, "a background block is followed by the block it watches");
});

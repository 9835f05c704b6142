import assert from "node:assert/strict";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { after, before, describe, it } from "node:test";
import { runCli } from "./cli.js";
import type { CliIo } from "./cli-io.js";
import { createProgressBar } from "./progress.js";
import { type FakeBroker, startFakeBroker } from "./testing/fake-broker.js";

class Capture {
  text = "";
  isTTY = true;
  columns = 60;
  write(chunk: string) {
    this.text += chunk;
    return true;
  }
}

function terminal(
  broker: FakeBroker,
  answer: string,
): CliIo & { stdout: Capture; stderr: Capture } {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  // Answer once the prompt has been written.
  const stderr = new Capture();
  const write = stderr.write.bind(stderr);
  stderr.write = (chunk: string) => {
    if (chunk.includes("Only 'yes' is accepted")) setImmediate(() => stdin.write(`${answer}\n`));
    return write(chunk);
  };
  return {
    env: { ATRIUM_BROKER_URL: broker.url, ATRIUM_BROKER_API_KEY: broker.apiKey },
    stdout: new Capture(),
    stderr,
    stdin,
  };
}

describe("apply on a terminal", () => {
  let broker: FakeBroker;
  let dir: string;
  before(async () => {
    broker = await startFakeBroker();
    dir = await mkdtemp(join(tmpdir(), "atriumctl-tty-"));
    await mkdir(join(dir, "p"));
    await writeFile(join(dir, "p", "a.yaml"), "name: a\nauth_type: api_key\n");
  });
  after(() => broker.close());

  it("does nothing unless the answer is yes", async () => {
    const io = terminal(broker, "y");
    assert.equal(await runCli(["apply", "-file", join(dir, "p")], io), 1);
    assert.match(io.stderr.text, /Apply cancelled\./);
    assert.equal(broker.providers.size, 0);
  });

  it("applies after yes and draws a progress bar", async () => {
    const io = terminal(broker, "yes");
    assert.equal(await runCli(["apply", "-file", join(dir, "p")], io), 0, io.stderr.text);
    assert.match(io.stderr.text, /\rApplying \[=+\] 1\/1\n/);
    assert.equal(broker.providers.size, 1);
  });
});

it("the progress bar stays silent off a terminal", () => {
  const stream = new Capture();
  stream.isTTY = false;
  createProgressBar(stream, "Applying")(1, 2);
  assert.equal(stream.text, "");
  stream.isTTY = true;
  createProgressBar(stream, "Applying")(1, 2);
  assert.match(stream.text, /^\rApplying \[=+ +\] 1\/2$/);
});

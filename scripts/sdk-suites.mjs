// The Python (pytest) and Go (go test) SDK suites, run by run-tests.mjs after node's runner and
// counted into its final line. A missing toolchain skips the suite with a reason on a developer
// machine and fails it under CI=true (the rule of the real-server suites).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const required = process.env.CI === "true";

/** Suites as pseudo paths, so `run-tests.mjs sdks/go` selects one like a test file. */
export const sdkSuites = [
  { path: "sdks/python", run: runPython },
  { path: "sdks/go", run: runGo },
];

function unavailable(name, reason) {
  if (required) {
    console.error(`${name}: ${reason}; CI=true requires it`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  console.log(`${name}: skipped, ${reason}`);
  return { passed: 0, failed: 0, skipped: 1 };
}

function run(command, args, options) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"], ...options });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      options.echo?.(chunk.toString());
    });
    child.on("error", () => resolve({ code: 1, out }));
    child.on("exit", (code) => resolve({ code: code ?? 1, out }));
  });
}

async function runPython(root) {
  const python = process.env.ATRIUM_PYTHON ?? "/usr/bin/python3";
  const probe = spawnSync(python, ["-c", "import httpx, pytest, websockets"], { stdio: "ignore" });
  if (probe.status !== 0) {
    return unavailable(
      "python SDK",
      `${python} lacks httpx, pytest or websockets ` +
        "(apt-get install python3-httpx python3-pytest python3-websockets)",
    );
  }
  const junit = join(mkdtempSync(join(tmpdir(), "atrium-pytest-")), "junit.xml");
  const { code } = await run(
    python,
    ["-m", "pytest", "-q", "-p", "no:cacheprovider", `--junitxml=${junit}`, "sdks/python/tests"],
    {
      cwd: root,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      echo: (text) => process.stdout.write(text),
    },
  );
  let xml = "";
  try {
    xml = readFileSync(junit, "utf8");
  } catch {
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const suite = /<testsuite\b[^>]*>/.exec(xml)?.[0] ?? "";
  const count = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite)?.[1] ?? 0);
  const failed = count("failures") + count("errors");
  const skipped = count("skipped");
  const passed = count("tests") - failed - skipped;
  // A crash before collection leaves no failure to count, only the exit code.
  return { passed, failed: failed === 0 && code !== 0 ? 1 : failed, skipped };
}

async function runGo(root) {
  const go = process.env.ATRIUM_GO ?? "go";
  if (spawnSync(go, ["version"], { stdio: "ignore" }).status !== 0) {
    return unavailable("go SDK", "go is not installed (apt-get install golang-go)");
  }
  const env = { ...process.env, GOPROXY: "off", GOFLAGS: "-buildvcs=false" };
  // Go's build cache needs a writable home; CI containers may have none.
  if (!env.GOCACHE && !env.HOME) env.GOCACHE = mkdtempSync(join(tmpdir(), "atrium-gocache-"));
  // -count=1: the e2e tests talk to services Go's test cache cannot see change.
  const { code, out } = await run(go, ["test", "-json", "-count=1", "./..."], {
    cwd: join(root, "sdks/go"),
    env,
    echo: undefined,
  });
  const results = new Map();
  for (const line of out.split("\n")) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line);
    if (event.Action === "output") process.stdout.write(event.Output);
    if (event.Test && ["pass", "fail", "skip"].includes(event.Action)) {
      results.set(event.Test, event.Action);
    }
  }
  // Count leaves: a test with subtests is their sum, not one more.
  const names = [...results.keys()];
  const leaves = names.filter((name) => !names.some((other) => other.startsWith(`${name}/`)));
  const tally = (action) => leaves.filter((name) => results.get(name) === action).length;
  const failed = tally("fail");
  // A build or vet failure fails no test, only the package.
  return {
    passed: tally("pass"),
    failed: failed === 0 && code !== 0 ? 1 : failed,
    skipped: tally("skip"),
  };
}

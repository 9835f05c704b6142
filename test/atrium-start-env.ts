import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer as createTcpServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./gateway-tcp-proxy.js";

/**
 * The environment for `atrium start` with every service on a spare port and each service told
 * where the others are, so a test never collides with a running `make start` or another test.
 */
export async function atriumStartEnv(dataDir: string) {
  const [memRest, memGrpc, brokerRest, brokerGrpc, gwRest, gwGrpc, agent] = await Promise.all(
    Array.from({ length: 7 }, freePort),
  );
  return {
    ports: { memRest, memGrpc, brokerRest, brokerGrpc, gwRest, gwGrpc, agent },
    env: {
      ATRIUM_DATA_DIR: dataDir,
      MEMORY_REST_PORT: String(memRest),
      MEMORY_GRPC_PORT: String(memGrpc),
      BROKER_REST_PORT: String(brokerRest),
      BROKER_GRPC_PORT: String(brokerGrpc),
      GATEWAY_REST_PORT: String(gwRest),
      GATEWAY_GRPC_PORT: String(gwGrpc),
      AGENT_PORT: String(agent),
      MEMORY_URL: `http://127.0.0.1:${memRest}`,
      MEMORY_GRPC_URL: `http://127.0.0.1:${memGrpc}`,
      BROKER_URL: `http://127.0.0.1:${brokerRest}`,
      BROKER_GRPC_URL: `http://127.0.0.1:${brokerGrpc}`,
    },
  };
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

const platformPorts = [8000, 8080, 8081, 8082, 9090, 9091, 9092];

async function portFree(port: number): Promise<boolean> {
  const server = createTcpServer();
  const free = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (free) await new Promise<void>((resolve) => server.close(() => resolve()));
  return free;
}

/**
 * The first port the kernel hands out to outgoing connections (Linux's default where the setting
 * cannot be read).
 */
async function ephemeralPortsStart(): Promise<number> {
  try {
    const range = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8");
    return Number.parseInt(range.trim().split(/\s+/)[0] ?? "", 10) || 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * An ATRIUM_PORT_OFFSET whose ports are free for `platforms` platforms, each `spacing` above the
 * one before, so tests never meet a running `make start` (offset 0) or each other. Every port
 * stays below the ephemeral range: a port found free there can be taken, before the platform
 * binds it, as the local end of any outgoing connection the tests running beside it make.
 */
export async function freePortOffset(spacing: number, platforms: number): Promise<number> {
  const highest = Math.max(...platformPorts) + spacing * (platforms - 1);
  const room = (await ephemeralPortsStart()) - 1 - highest - 1000;
  if (room <= 0) throw new Error(`no room below the ephemeral ports for ${platforms} platforms`);
  for (let attempt = 0; attempt < 50; attempt++) {
    const offset = 1000 + Math.floor(Math.random() * room);
    const ports = Array.from({ length: platforms }, (_, i) =>
      platformPorts.map((port) => port + offset + i * spacing),
    ).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return offset;
  }
  throw new Error("no free port offset found");
}

export interface AtriumProcess {
  /** Everything it printed on stdout so far. */
  output(): string;
  /** Ctrl-C to the whole process group; resolves when its output has closed. */
  stop(): Promise<void>;
}

/**
 * `atrium start` from the sources (as the tests run everything), in a process group of its own,
 * resolved once its banner is printed.
 */
export async function spawnAtriumStart(env: Record<string, string>): Promise<AtriumProcess> {
  const child = spawn(
    process.execPath,
    ["--conditions=atrium-source", "--import", "tsx", "packages/server/src/main.ts", "start"],
    {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let output = "";
  let errors = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    errors += chunk;
  });
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const kill = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group has already exited
    }
  };
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: string) => {
      output += chunk;
      if (output.includes("\n  stop ")) resolve();
    });
    child.once("exit", (code) =>
      reject(new Error(`atrium start exited ${code}:\n${output}\n${errors}`)),
    );
  }).catch((error) => {
    kill("SIGKILL");
    throw error;
  });
  return {
    output: () => output,
    async stop() {
      kill("SIGINT");
      const killer = setTimeout(() => kill("SIGKILL"), 15_000);
      await closed;
      clearTimeout(killer);
    },
  };
}

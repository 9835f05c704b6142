import { Writable } from "node:stream";
import { createLogger, type RunningService } from "@atrium/kit";
import { startMemoryService } from "@atrium/memory";

export interface MemoryUnderFault {
  service: RunningService;
  rest: string;
  /** Every log line so far, parsed. */
  logs(): { level: number; msg: string; component?: string }[];
  createSession(): Promise<string>;
}

/** The memory service in this process, logging to memory, on the given stores. */
export async function startMemoryUnderFault(
  env: Record<string, string>,
): Promise<MemoryUnderFault> {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const service = await startMemoryService({
    logger: createLogger({ name: "memory", level: "info", destination }),
    env: {
      MEMORY_HOST: "127.0.0.1",
      MEMORY_REST_PORT: "0",
      MEMORY_GRPC_PORT: "0",
      MEMORY_PROMOTER_INTERVAL: "1h",
      ...env,
    },
  });
  const rest = service.urls.rest;
  return {
    service,
    rest,
    logs: () =>
      lines
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line)),
    async createSession() {
      const res = await fetch(`${rest}/api/v1/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tenant_id: "faults", user_id: "u1" }),
      });
      const body = (await res.json()) as { session_id: string };
      return body.session_id;
    },
  };
}

/** A GET that reports its status, parsed body and how long it took. */
export async function timedGet(url: string) {
  const started = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), ms: performance.now() - started };
}

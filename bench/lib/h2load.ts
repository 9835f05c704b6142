import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { round } from "./load.js";

export interface H2loadOptions {
  url: string;
  /** Measured for this long after a second of warm-up; or else `requests` are sent. */
  durationS?: number;
  requests?: number;
  /** Connections. */
  clients: number;
  /** Concurrent streams per connection (HTTP/2 only). */
  streams?: number;
  /** HTTP/1.1 instead of HTTP/2 with prior knowledge, one request at a time per connection. */
  h1?: boolean;
  /** Sent as the body of a POST. */
  body?: Uint8Array;
  headers?: Record<string, string>;
}

export interface H2loadResult {
  /** Requests answered (in the measured period). */
  done: number;
  rps: number;
  /** Mean time per request in ms: h2load reports no percentiles. */
  meanMs: number;
  /** Requests that failed, errored or got a non-2xx status. */
  errors: number;
}

/** `time for request` figures ("412us", "1.31ms", "1.02s") in milliseconds. */
function h2loadMs(figure: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(figure);
  if (!match) return Number.NaN;
  return round(Number(match[1]) * { us: 0.001, ms: 1, s: 1000 }[match[2] as "us" | "ms" | "s"]);
}

/**
 * Load from h2load (Debian's `nghttp2-client`): a C generator that speaks HTTP/2 (so gRPC, with a
 * framed body and its headers) and HTTP/1.1, so that both transports of a service can be
 * measured by the same client. A gRPC error still comes with HTTP status 200, so callers check
 * one answer with a real client first. Undefined when h2load is not installed. Asynchronous, so
 * a server in this process keeps answering.
 */
export async function h2load(options: H2loadOptions): Promise<H2loadResult | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "h2load-"));
  const args = [`-c${options.clients}`];
  if (options.durationS !== undefined) args.push(`-D${options.durationS}`, "--warm-up-time=1");
  else args.push(`-n${options.requests}`);
  if (options.h1) args.push("--h1");
  else args.push(`-m${options.streams ?? 1}`);
  if (options.body !== undefined) {
    const file = join(dir, "body");
    writeFileSync(file, options.body);
    args.push("-d", file);
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    args.push("-H", `${name}: ${value}`);
  }
  let out: string;
  try {
    ({ stdout: out } = await promisify(execFile)("h2load", [...args, options.url], {
      encoding: "utf8",
    }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const count = (pattern: RegExp) => Number(pattern.exec(out)?.[1] ?? 0);
  return {
    done: count(/requests: \d+ total, \d+ started, (\d+) done/),
    rps: round(Number(/finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out)?.[1] ?? Number.NaN)),
    meanMs: h2loadMs(/time for request:\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1] ?? ""),
    errors:
      count(/(\d+) failed/) +
      count(/(\d+) errored/) +
      count(/(\d+) 3xx/) +
      count(/(\d+) 4xx/) +
      count(/(\d+) 5xx/),
  };
}

/** A gRPC request body: one uncompressed message behind its five-byte envelope. */
export function grpcEnvelope(message: Uint8Array): Uint8Array {
  const envelope = Buffer.alloc(5 + message.byteLength);
  envelope.writeUInt32BE(message.byteLength, 1);
  envelope.set(message, 5);
  return envelope;
}

/** The headers of a gRPC call, for h2load. */
export const grpcHeaders = { "content-type": "application/grpc", te: "trailers" };

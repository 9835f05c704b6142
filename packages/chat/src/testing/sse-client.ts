import { request } from "node:http";
import type { TraceEvent } from "../trace/trace-event.js";

export interface RawSseResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: TraceEvent[];
  ids: string[];
  heartbeats: number;
}

export interface RawSseOptions {
  headers?: Record<string, string>;
}

/** A plain HTTP SSE reader for tests: collects events until the server ends the response. */
export function readSse(url: string, options: RawSseOptions = {}): Promise<RawSseResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: options.headers }, (res) => {
      const result: RawSseResult = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        ids: [],
        heartbeats: 0,
      };
      let buffer = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
          if (block === ": heartbeat") {
            result.heartbeats++;
            continue;
          }
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) result.ids.push(line.slice(4));
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (!data) continue;
          result.events.push(JSON.parse(data) as TraceEvent);
        }
      });
      res.on("end", () => resolve(result));
      res.on("close", () => resolve(result));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

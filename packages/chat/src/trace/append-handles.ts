import { writeSync } from "node:fs";
import { type FileHandle, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";

export interface AppendHandlesOptions {
  /** A file not written for this long is closed. Default 2 s. */
  idleMs?: number;
  /** Most files kept open at once; the least recently written one is closed first. Default 256. */
  maxOpen?: number;
}

interface OpenFile {
  handle: FileHandle;
  timer?: NodeJS.Timeout;
}

/**
 * Writes all of `data` at the end of a file opened for appending, synchronously. A trace line is
 * a copy into the page cache, microseconds; handing it to libuv's thread pool instead costs a
 * thread wake-up and a completion callback per line, which at a thousand trace events a second
 * was a quarter of what the chat server spent per event (bench/chat-stream: server CPU per 1,000
 * deliveries on Redis fell from 69–76 to 48–58 ms with this). pino writes its log files the same
 * way by default. The price: a disk that stalls writes stalls the event loop, so trace files
 * belong on local disk (TRACES_DIR).
 */
function appendAll(fd: number, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
}

/**
 * Appends to files through handles kept open while a file is being written, since opening and
 * closing a file per trace event cost more than the write itself. The caller never runs two
 * appends to the same path at once.
 */
export function createAppendHandles(options: AppendHandlesOptions = {}) {
  const idleMs = options.idleMs ?? 2000;
  const maxOpen = options.maxOpen ?? 256;
  // Map order is recency order: a used file is re-inserted at the end.
  const files = new Map<string, OpenFile>();

  function closeFile(path: string, file: OpenFile) {
    clearTimeout(file.timer);
    if (files.get(path) === file) files.delete(path);
    void file.handle.close().catch(() => undefined);
  }

  async function openFile(path: string): Promise<OpenFile> {
    let handle: FileHandle;
    try {
      handle = await open(path, "a");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      await mkdir(dirname(path), { recursive: true });
      handle = await open(path, "a");
    }
    for (const [oldest, file] of files) {
      if (files.size < maxOpen) break;
      closeFile(oldest, file);
    }
    const file: OpenFile = { handle };
    file.timer = setTimeout(() => closeFile(path, file), idleMs);
    file.timer.unref();
    return file;
  }

  return {
    async append(path: string, text: string): Promise<void> {
      let file = files.get(path);
      if (file) files.delete(path);
      else file = await openFile(path);
      files.set(path, file);
      try {
        appendAll(file.handle.fd, Buffer.from(text));
      } catch (error) {
        closeFile(path, file);
        throw error;
      }
      // Restarts the idle countdown without a new timer per line.
      file.timer?.refresh();
    },
    /** Closes every open file; no write is ever left in flight. */
    async close(): Promise<void> {
      const open = [...files.values()];
      files.clear();
      await Promise.all(
        open.map(async (file) => {
          clearTimeout(file.timer);
          await file.handle.close().catch(() => undefined);
        }),
      );
    },
  };
}

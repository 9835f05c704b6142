import { write } from "node:fs";
import { type FileHandle, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";

export interface AppendHandlesOptions {
  /** A file not written for this long is closed. Default 2 s. */
  idleMs?: number;
  /** Most files kept open at once; the least recently written idle one is closed first. Default 256. */
  maxOpen?: number;
}

interface OpenFile {
  handle: FileHandle;
  /** The write in flight: the handle knows nothing of writes through its descriptor. */
  writing?: Promise<void>;
  timer?: NodeJS.Timeout;
}

/**
 * Writes all of `data` at the end of a file opened for appending. The callback form of write is
 * one thread-pool request and one promise; FileHandle.appendFile costs several promise hops per
 * call, which at a thousand trace lines a second showed in the stream's latency.
 */
function appendAll(fd: number, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (offset: number) => {
      write(fd, data, offset, data.length - offset, null, (error, written) => {
        if (error) reject(error);
        else if (offset + written < data.length) next(offset + written);
        else resolve();
      });
    };
    next(0);
  });
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

  function evictIdle() {
    for (const [path, file] of files) {
      if (files.size < maxOpen) return;
      if (!file.writing) closeFile(path, file);
    }
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
    evictIdle();
    return { handle };
  }

  return {
    async append(path: string, text: string): Promise<void> {
      let file = files.get(path);
      if (file) files.delete(path);
      else file = await openFile(path);
      files.set(path, file);
      clearTimeout(file.timer);
      file.writing = appendAll(file.handle.fd, Buffer.from(text));
      try {
        await file.writing;
      } catch (error) {
        closeFile(path, file);
        throw error;
      } finally {
        file.writing = undefined;
      }
      const idle = file;
      idle.timer = setTimeout(() => closeFile(path, idle), idleMs);
      idle.timer.unref();
    },
    /** Closes every open file once its write in flight, if any, is done. */
    async close(): Promise<void> {
      const open = [...files.values()];
      files.clear();
      await Promise.all(
        open.map(async (file) => {
          clearTimeout(file.timer);
          // Closed under a write, the descriptor could be reused by another file before it runs.
          await file.writing?.catch(() => undefined);
          await file.handle.close().catch(() => undefined);
        }),
      );
    },
  };
}

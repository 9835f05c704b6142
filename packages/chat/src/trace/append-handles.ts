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
  busy: boolean;
  timer?: NodeJS.Timeout;
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
      if (!file.busy) closeFile(path, file);
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
    return { handle, busy: false };
  }

  return {
    async append(path: string, text: string): Promise<void> {
      let file = files.get(path);
      if (file) files.delete(path);
      else file = await openFile(path);
      files.set(path, file);
      clearTimeout(file.timer);
      file.busy = true;
      try {
        await file.handle.appendFile(text);
      } catch (error) {
        closeFile(path, file);
        throw error;
      } finally {
        file.busy = false;
      }
      const idle = file;
      idle.timer = setTimeout(() => closeFile(path, idle), idleMs);
      idle.timer.unref();
    },
    /** Closes every open file. */
    async close(): Promise<void> {
      const open = [...files.entries()];
      files.clear();
      await Promise.all(
        open.map(([, file]) => {
          clearTimeout(file.timer);
          return file.handle.close().catch(() => undefined);
        }),
      );
    },
  };
}

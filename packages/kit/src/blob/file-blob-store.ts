import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { invalidArgument, notFound } from "../errors.js";
import type { BlobStore } from "./blob.js";
import { assertValidBlobKey } from "./blob-key.js";

export interface FileBlobStoreOptions {
  /** Directory the keys are mapped under; created on first use. */
  root: string;
}

/** Holds content types and half-written files; never a key's first segment. */
const reservedDirectory = ".atrium";
const fallbackContentType = "application/octet-stream";

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException)?.code === "ENOENT";
}

/**
 * Blobs as files: key `a/b.txt` is `<root>/a/b.txt`, addressed as a `file://` URL, with its
 * content type beside it under `<root>/.atrium/content-types/`.
 */
export function createFileBlobStore(options: FileBlobStoreOptions): BlobStore {
  const root = resolve(options.root);
  const contentTypes = join(root, reservedDirectory, "content-types");
  const scratch = join(root, reservedDirectory, "tmp");

  function assertStorableKey(key: string): void {
    assertValidBlobKey(key);
    if (key.split("/")[0] === reservedDirectory) {
      throw invalidArgument(
        `invalid blob key ${JSON.stringify(key)}: "${reservedDirectory}/" is reserved`,
      );
    }
  }

  /** Resolves a key under root, refusing anything that would land outside it. */
  function pathOf(base: string, key: string): string {
    const path = resolve(base, key);
    if (!path.startsWith(base + sep)) {
      throw invalidArgument(`invalid blob key ${JSON.stringify(key)}: it escapes the store`);
    }
    return path;
  }

  function keyOf(uri: string): string {
    let path: string;
    try {
      path = fileURLToPath(uri);
    } catch {
      throw invalidArgument("blob URI is not a file:// URL of this store");
    }
    const key = relative(root, path);
    if (key === "" || key.startsWith("..") || isAbsolute(key)) {
      throw invalidArgument("blob URI is not in this store");
    }
    const normalized = key.split(sep).join("/");
    assertStorableKey(normalized);
    return normalized;
  }

  /** Writes whole or not at all: a reader never sees half a file. */
  async function writeAtomically(path: string, data: Uint8Array | string): Promise<void> {
    await mkdir(scratch, { recursive: true });
    await mkdir(dirname(path), { recursive: true });
    const temporary = join(scratch, randomUUID());
    try {
      await writeFile(temporary, data);
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  return {
    kind: "file",

    async put(key, body, contentType) {
      assertStorableKey(key);
      const path = pathOf(root, key);
      await writeAtomically(path, body);
      await writeAtomically(pathOf(contentTypes, key), contentType);
      return { uri: pathToFileURL(path).href, size: body.byteLength };
    },

    async get(uri) {
      const key = keyOf(uri);
      let body: Buffer;
      try {
        body = await readFile(pathOf(root, key));
      } catch (error) {
        if (isMissing(error)) throw notFound(`blob not found: ${uri}`);
        throw error;
      }
      const contentType = await readFile(pathOf(contentTypes, key), "utf8").catch((error) => {
        if (isMissing(error)) return fallbackContentType;
        throw error;
      });
      return { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), contentType };
    },

    async delete(uri) {
      const key = keyOf(uri);
      await rm(pathOf(root, key), { force: true });
      await rm(pathOf(contentTypes, key), { force: true });
    },

    async ping() {
      await mkdir(scratch, { recursive: true });
      const probe = join(scratch, `ping-${randomUUID()}`);
      await writeFile(probe, "");
      await rm(probe, { force: true });
    },
  };
}

import { fileURLToPath } from "node:url";
import { ConfigError } from "../config/load-config.js";
import type { BlobStore } from "./blob.js";
import { createFileBlobStore } from "./file-blob-store.js";
import { createS3BlobStore, type S3BlobStoreOptions } from "./s3-blob-store.js";

const variable = "BLOB_STORE_URL";
const expected = "s3://bucket?endpoint=…&region=… or file:///absolute/dir";
const s3Parameters = new Set([
  "endpoint",
  "region",
  "forcePathStyle",
  "accessKeyId",
  "secretAccessKey",
]);

// Messages never repeat the URL itself: its query may carry a secret key.
const invalid = (why: string) =>
  new ConfigError(`${variable} is invalid: ${why} (expected ${expected})`);

function parseS3(url: URL): S3BlobStoreOptions {
  const bucket = url.hostname;
  if (bucket === "") throw invalid("the s3:// URL names no bucket");
  if (url.pathname !== "" && url.pathname !== "/") {
    throw invalid("key prefixes after the bucket are not supported");
  }
  const unknown = [...url.searchParams.keys()].filter((name) => !s3Parameters.has(name));
  if (unknown.length > 0) throw invalid(`unknown parameter(s) ${unknown.join(", ")}`);
  const query = (name: string) => url.searchParams.get(name) ?? undefined;

  const accessKeyId = query("accessKeyId");
  const secretAccessKey = query("secretAccessKey");
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw invalid("accessKeyId and secretAccessKey must be given together");
  }
  const forcePathStyle = query("forcePathStyle");
  if (forcePathStyle !== undefined && forcePathStyle !== "true" && forcePathStyle !== "false") {
    throw invalid("forcePathStyle must be true or false");
  }
  const endpoint = query("endpoint");
  if (endpoint !== undefined && !URL.canParse(endpoint)) throw invalid("endpoint is not a URL");
  return {
    bucket,
    endpoint,
    region: query("region"),
    forcePathStyle: forcePathStyle === undefined ? undefined : forcePathStyle === "true",
    // Without query credentials the SDK's default chain reads AWS_ACCESS_KEY_ID and
    // AWS_SECRET_ACCESS_KEY (and session tokens, profiles and instance roles).
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
  };
}

function parseFile(url: URL): string {
  if (url.search !== "" || url.hash !== "")
    throw invalid("a file:// URL takes no query or fragment");
  try {
    return fileURLToPath(url);
  } catch {
    throw invalid("a file:// URL must name an absolute local directory, as file:///abs/dir");
  }
}

/**
 * The blob store `BLOB_STORE_URL` names, or undefined when it names none: the services then
 * answer payload requests with FailedPrecondition, as the spec says.
 */
export function createBlobStore(url: string | undefined): BlobStore | undefined {
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid("it is not a URL");
  }
  switch (parsed.protocol) {
    case "s3:":
      return createS3BlobStore(parseS3(parsed));
    case "file:":
      return createFileBlobStore({ root: parseFile(parsed) });
    default:
      throw invalid(`unsupported scheme "${parsed.protocol}"`);
  }
}

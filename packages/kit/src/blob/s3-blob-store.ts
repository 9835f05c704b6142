import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { invalidArgument, notFound } from "../errors.js";
import type { BlobStore } from "./blob.js";
import { assertValidBlobKey } from "./blob-key.js";

export interface S3BlobStoreOptions {
  bucket: string;
  /** For S3-compatible services (MinIO, R2, GCS interop, s3rver); absent means AWS. */
  endpoint?: string;
  /** Default `us-east-1`. */
  region?: string;
  /** Default true: bucket in the path, which every S3-compatible service understands. */
  forcePathStyle?: boolean;
  /** Absent: the SDK's default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles, roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

const fallbackContentType = "application/octet-stream";

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

/** Blobs as objects of one S3 bucket, addressed as `s3://bucket/key`. */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const { bucket } = options;
  if (bucket.length === 0) throw new Error("S3 blob store needs a bucket name");
  const client = new S3Client({
    endpoint: options.endpoint,
    region: options.region ?? "us-east-1",
    forcePathStyle: options.forcePathStyle ?? true,
    credentials: options.credentials,
    // Checksums only where S3 demands them: several S3-compatible services reject the
    // flexible-checksum headers newer SDKs send by default.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  const uriPrefix = `s3://${bucket}/`;

  function keyOf(uri: string): string {
    if (!uri.startsWith(uriPrefix)) {
      throw invalidArgument(`blob URI is not in this store (${uriPrefix}…)`);
    }
    const key = uri.slice(uriPrefix.length);
    assertValidBlobKey(key);
    return key;
  }

  return {
    kind: "s3",

    async put(key, body, contentType) {
      assertValidBlobKey(key);
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }),
      );
      return { uri: uriPrefix + key, size: body.byteLength };
    },

    async get(uri) {
      const key = keyOf(uri);
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        const body = object.Body ? await object.Body.transformToByteArray() : new Uint8Array();
        return { body, contentType: object.ContentType ?? fallbackContentType };
      } catch (error) {
        if (isNotFound(error)) throw notFound(`blob not found: ${uri}`);
        throw error;
      }
    },

    async delete(uri) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keyOf(uri) }));
    },

    async ping() {
      await client.send(new HeadBucketCommand({ Bucket: bucket }));
    },
  };
}

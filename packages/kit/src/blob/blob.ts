export interface StoredBlob {
  /** `s3://bucket/key` or `file:///abs/path`. */
  uri: string;
  size: number;
}

/** The blob-store port. S3 and the filesystem implement it. */
export interface BlobStore {
  readonly kind: "s3" | "file";
  put(key: string, body: Uint8Array, contentType: string): Promise<StoredBlob>;
  get(uri: string): Promise<{ body: Uint8Array; contentType: string }>;
  delete(uri: string): Promise<void>;
  ping(): Promise<void>;
}

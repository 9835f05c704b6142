import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import S3rver from "s3rver";
import { blobContract } from "../testing/blob-contract.js";
import { createS3BlobStore } from "./s3-blob-store.js";

const bucket = "atrium-test";
let server: S3rver;
let directory: string;
let endpoint: string;

before(async () => {
  directory = await mkdtemp(join(tmpdir(), "atrium-s3rver-"));
  server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  endpoint = `http://127.0.0.1:${port}`;
});

after(async () => {
  await server.close();
  await rm(directory, { recursive: true, force: true });
});

blobContract("s3", async () => ({
  store: createS3BlobStore({
    bucket,
    endpoint,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  }),
  outsideUri: `s3://another-bucket/blob`,
}));

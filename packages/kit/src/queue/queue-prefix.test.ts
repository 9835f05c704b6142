import assert from "node:assert/strict";
import { test } from "node:test";
import { deploymentQueuePrefix } from "./queue-prefix.js";

const url = (rest: string) => ({
  databaseUrl: `postgres://atrium:pw@db:5432/${rest}`,
  dataDir: "d",
});

test("deployments on other databases or schemas get other queue prefixes", () => {
  const prefixes = [
    deploymentQueuePrefix(url("atrium")),
    deploymentQueuePrefix(url("other")),
    deploymentQueuePrefix(url("atrium?options=-c%20search_path%3Dteam_b")),
    deploymentQueuePrefix({ databaseUrl: "postgres://atrium:pw@db2:5432/atrium", dataDir: "d" }),
    deploymentQueuePrefix({ dataDir: "/srv/a" }),
    deploymentQueuePrefix({ dataDir: "/srv/b" }),
  ];
  assert.equal(new Set(prefixes).size, prefixes.length);
});

test("a deployment's prefix does not change with its credentials, and keeps a hash tag", () => {
  const prefix = deploymentQueuePrefix(url("atrium"));
  assert.equal(
    deploymentQueuePrefix({ databaseUrl: "postgres://reader:rotated@DB/atrium", dataDir: "x" }),
    prefix,
  );
  assert.match(prefix, /^\{atrium:[0-9a-f]{16}\}$/);
});

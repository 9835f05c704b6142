import assert from "node:assert/strict";
import { test } from "node:test";
import { deploymentRedisPrefix } from "./deployment-prefix.js";

const url = (rest: string) => ({
  databaseUrl: `postgres://atrium:pw@db:5432/${rest}`,
  dataDir: "d",
});

test("deployments on other databases or schemas get other Redis prefixes", () => {
  const prefixes = [
    deploymentRedisPrefix(url("atrium")),
    deploymentRedisPrefix(url("other")),
    deploymentRedisPrefix(url("atrium?options=-c%20search_path%3Dteam_b")),
    deploymentRedisPrefix({ databaseUrl: "postgres://atrium:pw@db2:5432/atrium", dataDir: "d" }),
    deploymentRedisPrefix({ dataDir: "/srv/a" }),
    deploymentRedisPrefix({ dataDir: "/srv/b" }),
  ];
  assert.equal(new Set(prefixes).size, prefixes.length);
});

test("a deployment's prefix does not change with its credentials, and keeps a hash tag", () => {
  const prefix = deploymentRedisPrefix(url("atrium"));
  assert.equal(
    deploymentRedisPrefix({ databaseUrl: "postgres://reader:rotated@DB/atrium", dataDir: "x" }),
    prefix,
  );
  assert.match(prefix, /^\{atrium:[0-9a-f]{16}\}$/);
});

import assert from "node:assert/strict";
import { it } from "node:test";
import { flagEnabled, parseArgs, UsageError } from "./cli-args.js";

it("accepts Go-style and double-dash flags in any position", () => {
  const args = parseArgs(
    ["-file", "m.yaml", "apply", "--secrets=sops:s.enc.yaml", "-prune", "--auto-approve=false"],
    {},
  );
  assert.equal(args.command, "apply");
  assert.equal(args.values.file, "m.yaml");
  assert.equal(args.values.secrets, "sops:s.enc.yaml");
  assert.equal(flagEnabled(args, "prune"), true);
  assert.equal(flagEnabled(args, "auto-approve"), false);
});

it("reads ATRIUM_ variables for flags not given, the command line winning", () => {
  const env = {
    ATRIUM_SECRETS: "gcpsm:proj",
    ATRIUM_REQUIRE_ENCRYPTED_SECRETS: "true",
    ATRIUM_FILE: "from-env.yaml",
  };
  const args = parseArgs(["plan", "-file", "cli.yaml"], env);
  assert.equal(args.values.file, "cli.yaml");
  assert.equal(args.values.secrets, "gcpsm:proj");
  assert.equal(flagEnabled(args, "require-encrypted-secrets"), true);
});

it("rejects unknown commands and flags, missing values and malformed booleans", () => {
  assert.throws(() => parseArgs(["deploy"], {}), UsageError);
  assert.throws(() => parseArgs(["plan", "-nope"], {}), /unknown flag "-nope"/);
  assert.throws(() => parseArgs(["plan", "-file"], {}), /needs a value/);
  assert.throws(() => parseArgs(["plan", "-prune=maybe"], {}), /true or false/);
  assert.throws(() => parseArgs(["plan"], { ATRIUM_PARALLELISM: "0" }), /positive integer/);
});

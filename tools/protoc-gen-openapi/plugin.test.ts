import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { create, fromBinary } from "@bufbuild/protobuf";
import {
  CodeGeneratorRequestSchema,
  FileDescriptorSetSchema,
  file_google_protobuf_timestamp,
} from "@bufbuild/protobuf/wkt";
import { libraryService } from "../../packages/kit/src/rpc/testdata/library-service.js";
import { createOpenApiPlugin } from "./plugin.js";

const root = new URL("../../", import.meta.url).pathname;
const version = readFileSync(`${root}VERSION`, "utf8").trim();

/** The descriptors buf hands the plugin during `make gen`, comments included. */
function bufImage() {
  const image = execFileSync(`${root}node_modules/.bin/buf`, ["build", "-o", "-"], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  return fromBinary(FileDescriptorSetSchema, image);
}

describe("protoc-gen-openapi", () => {
  it("regenerates the committed memory.v1 document byte for byte", () => {
    const { file } = bufImage();
    const response = createOpenApiPlugin({ version }).run(
      create(CodeGeneratorRequestSchema, {
        protoFile: file,
        fileToGenerate: file.map((f) => f.name).filter((name) => !name.startsWith("google/")),
      }),
    );
    const memory = response.file.find((f) => f.name === "memory.v1.openapi.json");
    assert.ok(memory, response.file.map((f) => f.name).join(", "));
    assert.equal(memory.content, readFileSync(`${root}openapi/memory.v1.openapi.json`, "utf8"));
    assert.ok(response.file.every((f) => f.name.endsWith(".openapi.json")));
  });

  it("refuses a streaming method that carries a REST annotation", () => {
    const request = create(CodeGeneratorRequestSchema, {
      protoFile: [file_google_protobuf_timestamp.proto, libraryService.file.proto],
      fileToGenerate: [`${libraryService.file.name}.proto`],
    });
    assert.throws(
      () => createOpenApiPlugin({ version }).run(request),
      /fixture\.v1\.Feed\.WatchBook: server_streaming methods have no REST mapping/,
    );
  });
});

import { http } from "@atrium/api";
import {
  create,
  createFileRegistry,
  type DescFile,
  type DescService,
  hasOption,
  protoInt64,
} from "@bufbuild/protobuf";
import {
  type CodeGeneratorRequest,
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import type { Plugin } from "@bufbuild/protoplugin";
import { accessByPackage } from "./access.js";
import { buildOpenApiDocument } from "./document.js";

export interface OpenApiPluginOptions {
  /** Written to `info.version` of every document. */
  version: string;
}

/**
 * Writes `<package>.openapi.json` for every proto package with a REST-bound service among the
 * files to generate. It answers with JSON files directly rather than through
 * createEcmaScriptPlugin, whose default js+dts targets would filter out or transpile anything
 * that is not TypeScript.
 */
export function createOpenApiPlugin(options: OpenApiPluginOptions): Plugin {
  return {
    name: "protoc-gen-openapi",
    version: `v${options.version}`,
    run(request: CodeGeneratorRequest) {
      const registry = createFileRegistry(
        create(FileDescriptorSetSchema, { file: request.protoFile }),
      );
      const servicesByPackage = new Map<string, DescService[]>();
      for (const name of request.fileToGenerate) {
        if (name.startsWith("google/")) continue;
        const file = registry.getFile(name) as DescFile;
        // Services without a google.api.http rule (grpc.health, grpc.reflection) have no REST face.
        if (!file.services.some((service) => service.methods.some((m) => hasOption(m, http)))) {
          continue;
        }
        const services = servicesByPackage.get(file.proto.package) ?? [];
        services.push(...file.services);
        servicesByPackage.set(file.proto.package, services);
      }
      const files = [...servicesByPackage].map(([packageName, services]) => ({
        name: `${packageName}.openapi.json`,
        content: `${JSON.stringify(buildOpenApiDocument({ packageName, services, version: options.version, access: accessByPackage[packageName] }), null, 2)}\n`,
      }));
      return create(CodeGeneratorResponseSchema, {
        supportedFeatures: protoInt64.parse(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
        file: files,
      });
    },
  };
}

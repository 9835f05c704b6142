import type { DescMessage, DescService } from "@bufbuild/protobuf";
import { descriptionOf } from "./comments.js";
import { errorSchema, errorSchemaName, methodOperations } from "./operations.js";
import { createSchemaCatalog, type OpenApiObject } from "./schemas.js";

export interface OpenApiDocumentOptions {
  /** Proto package the document covers, e.g. `memory.v1`. */
  packageName: string;
  services: readonly DescService[];
  /** `info.version`: the one Atrium version. */
  version: string;
}

/** An OpenAPI 3.0.3 document for the REST face of the services of one proto package. */
export function buildOpenApiDocument(options: OpenApiDocumentOptions): OpenApiObject {
  const { packageName, services, version } = options;
  const requestMessages = reachableMessages(
    services.flatMap((service) => service.methods.map((method) => method.input)),
  );
  const catalog = createSchemaCatalog({
    responseOnly: (message) => !requestMessages.has(message.typeName),
  });

  const paths: Record<string, Record<string, OpenApiObject>> = {};
  for (const service of services) {
    for (const method of service.methods) {
      for (const { path, httpMethod, operation } of methodOperations(method, catalog)) {
        paths[path] ??= {};
        if (paths[path][httpMethod] !== undefined) {
          throw new Error(`${httpMethod.toUpperCase()} ${path} is bound twice`);
        }
        paths[path][httpMethod] = operation;
      }
    }
  }

  const serviceDescription = services.length === 1 ? descriptionOf(services[0]) : undefined;
  return {
    openapi: "3.0.3",
    info: {
      title: packageName,
      version,
      ...(serviceDescription ? { description: serviceDescription } : {}),
    },
    tags: services.map((service) => {
      const description = descriptionOf(service);
      return { name: service.name, ...(description ? { description } : {}) };
    }),
    paths,
    components: { schemas: { ...catalog.components(), [errorSchemaName]: errorSchema } },
  };
}

/** Type names of the messages a request can contain, directly or nested. */
function reachableMessages(roots: readonly DescMessage[]): Set<string> {
  const seen = new Set<string>();
  const visit = (message: DescMessage) => {
    if (seen.has(message.typeName)) return;
    seen.add(message.typeName);
    for (const field of message.fields) {
      if (field.message !== undefined) visit(field.message);
    }
  };
  roots.forEach(visit);
  return seen;
}

import { openApiDefaultServer, openApiLicence } from "@atrium/kit";
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import type { ServiceAccess } from "./access.js";
import { descriptionOf } from "./comments.js";
import { errorResponseComponents, errorSchemas } from "./error-responses.js";
import { methodOperations } from "./operations.js";
import { createSchemaCatalog, type OpenApiObject } from "./schemas.js";

export interface OpenApiDocumentOptions {
  /** Proto package the document covers, e.g. `memory.v1`. */
  packageName: string;
  services: readonly DescService[];
  /** `info.version`: the one Atrium version. */
  version: string;
  /** Auth, default port and failures of the service's host; absent: none declared. */
  access?: ServiceAccess;
}

/** An OpenAPI 3.0.3 document for the REST face of the services of one proto package. */
export function buildOpenApiDocument(options: OpenApiDocumentOptions): OpenApiObject {
  const { packageName, services, version, access } = options;
  const requestMessages = reachableMessages(
    services.flatMap((service) => service.methods.map((method) => method.input)),
  );
  const catalog = createSchemaCatalog({
    responseOnly: (message) => !requestMessages.has(message.typeName),
  });

  const paths: Record<string, Record<string, OpenApiObject>> = {};
  for (const service of services) {
    for (const method of service.methods) {
      for (const { path, httpMethod, operation } of methodOperations(method, catalog, access)) {
        paths[path] ??= {};
        if (paths[path][httpMethod] !== undefined) {
          throw new Error(`${httpMethod.toUpperCase()} ${path} is bound twice`);
        }
        paths[path][httpMethod] = operation;
      }
    }
  }

  const serviceDescription = services.length === 1 ? descriptionOf(services[0]) : undefined;
  const description = [serviceDescription, access?.authentication].filter(Boolean).join("\n\n");
  const responses = errorResponseComponents(
    new Set(JSON.stringify(paths).match(/#\/components\/responses\/[A-Za-z]+/g)),
  );
  return {
    openapi: "3.0.3",
    info: {
      title: packageName,
      version,
      ...(description ? { description } : {}),
      license: openApiLicence,
    },
    ...(access
      ? { servers: [openApiDefaultServer(access.restPort)], security: access.security }
      : {}),
    tags: services.map((service) => {
      const description = descriptionOf(service);
      return { name: service.name, ...(description ? { description } : {}) };
    }),
    paths,
    components: {
      schemas: { ...catalog.components(), ...errorSchemas(responses) },
      ...(Object.keys(responses).length > 0 ? { responses } : {}),
      ...(access ? { securitySchemes: access.securitySchemes } : {}),
    },
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

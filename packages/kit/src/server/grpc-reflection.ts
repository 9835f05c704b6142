import { grpcReflectionV1, grpcReflectionV1alpha } from "@atrium/api";
import {
  create,
  createRegistry,
  type DescFile,
  type DescService,
  type Registry,
  toBinary,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";

/*
 * Server reflection (https://github.com/grpc/grpc/blob/master/doc/server-reflection.md) for
 * Connect. No maintained implementation exists for connect-node: @grpc/reflection serves grpc-js
 * servers from protobufjs definitions, and npm's Connect ones are unmaintained single releases.
 * The descriptors are already here, embedded in the generated code, so this answers from
 * @bufbuild/protobuf's file registry.
 */

type V1 = typeof grpcReflectionV1;
type ReflectionRequest = grpcReflectionV1.ServerReflectionRequest;
type ReflectionResponse = grpcReflectionV1.ServerReflectionResponse;

/** The files and what they import, transitively. */
function withImports(roots: readonly DescFile[]): DescFile[] {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (files.has(file.name)) return;
    files.set(file.name, file);
    file.dependencies.forEach(visit);
  };
  roots.forEach(visit);
  return [...files.values()];
}

interface Descriptors {
  registry: Registry;
  files: ReadonlyMap<string, DescFile>;
}

/**
 * Answers one request; the message shapes of v1 and v1alpha are the same, so one function serves
 * both and the caller creates the response of its version.
 */
function answer(
  { registry, files: filesByName }: Descriptors,
  serviceNames: readonly string[],
  request: ReflectionRequest,
): Omit<ReflectionResponse, "$typeName" | "validHost" | "originalRequest"> {
  const notFound = (what: string) => ({
    messageResponse: {
      case: "errorResponse" as const,
      value: create(grpcReflectionV1.ErrorResponseSchema, {
        errorCode: Code.NotFound,
        errorMessage: `${what} not found`,
      }),
    },
  });
  const files = (file: DescFile) => ({
    messageResponse: {
      case: "fileDescriptorResponse" as const,
      value: create(grpcReflectionV1.FileDescriptorResponseSchema, {
        fileDescriptorProto: withImports([file]).map((f) =>
          toBinary(FileDescriptorProtoSchema, f.proto),
        ),
      }),
    },
  });
  const { messageRequest } = request;
  switch (messageRequest.case) {
    case "listServices":
      return {
        messageResponse: {
          case: "listServicesResponse",
          value: create(grpcReflectionV1.ListServiceResponseSchema, {
            service: serviceNames.map((name) => ({ name })),
          }),
        },
      };
    case "fileByFilename": {
      const file = filesByName.get(messageRequest.value);
      return file ? files(file) : notFound(`file ${messageRequest.value}`);
    }
    case "fileContainingSymbol": {
      const symbol = messageRequest.value;
      // A method or a field is named after its parent: `pkg.Service.Method`, `pkg.Message.field`.
      const parent = symbol.slice(0, Math.max(symbol.lastIndexOf("."), 0));
      const desc = registry.get(symbol) ?? registry.get(parent);
      if (desc === undefined) return notFound(`symbol ${symbol}`);
      return files(desc.file);
    }
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = messageRequest.value;
      const extendee = registry.getMessage(containingType);
      const extension = extendee && registry.getExtensionFor(extendee, extensionNumber);
      return extension
        ? files(extension.file)
        : notFound(`extension ${extensionNumber} of ${containingType}`);
    }
    case "allExtensionNumbersOfType": {
      const extendee = registry.getMessage(messageRequest.value);
      if (extendee === undefined) return notFound(`type ${messageRequest.value}`);
      const numbers: number[] = [];
      for (const desc of registry) {
        if (desc.kind === "extension" && desc.extendee.typeName === extendee.typeName) {
          numbers.push(desc.number);
        }
      }
      return {
        messageResponse: {
          case: "allExtensionNumbersResponse",
          value: create(grpcReflectionV1.ExtensionNumberResponseSchema, {
            baseTypeName: extendee.typeName,
            extensionNumber: numbers.sort((a, b) => a - b),
          }),
        },
      };
    }
    default:
      return {
        messageResponse: {
          case: "errorResponse",
          value: create(grpcReflectionV1.ErrorResponseSchema, {
            errorCode: Code.InvalidArgument,
            errorMessage: "message_request is not set",
          }),
        },
      };
  }
}

export interface GrpcReflection {
  v1: ServiceImpl<V1["ServerReflection"]>;
  v1alpha: ServiceImpl<typeof grpcReflectionV1alpha.ServerReflection>;
  /** The reflection services themselves, to register beside `services`. */
  services: readonly DescService[];
}

/** Reflection over `services` (and itself, as grpcurl and buf expect to see it listed). */
export function createGrpcReflection(services: readonly DescService[]): GrpcReflection {
  const reflectionServices = [
    grpcReflectionV1.ServerReflection,
    grpcReflectionV1alpha.ServerReflection,
  ];
  const all = [...services, ...reflectionServices];
  const files = withImports(all.map((service) => service.file));
  const descriptors: Descriptors = {
    registry: createRegistry(...files),
    files: new Map(files.map((file) => [`${file.name}.proto`, file])),
  };
  const serviceNames = all.map((service) => service.typeName);

  return {
    services: reflectionServices,
    v1: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) {
          yield create(grpcReflectionV1.ServerReflectionResponseSchema, {
            validHost: request.host,
            originalRequest: request,
            ...answer(descriptors, serviceNames, request),
          });
        }
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests) {
        for await (const request of requests) {
          // v1alpha's messages are v1's field for field; only the type names differ.
          const asV1 = create(grpcReflectionV1.ServerReflectionRequestSchema, {
            host: request.host,
            messageRequest: request.messageRequest as ReflectionRequest["messageRequest"],
          });
          const { messageResponse } = answer(descriptors, serviceNames, asV1);
          yield create(grpcReflectionV1alpha.ServerReflectionResponseSchema, {
            validHost: request.host,
            originalRequest: request,
            messageResponse: alphaResponse(messageResponse),
          });
        }
      },
    },
  };
}

/** A message's fields without its type name, to create the same fields as another type. */
const fieldsOf = <T extends { $typeName: string }>({ $typeName, ...fields }: T) => fields;

/** A v1 response body re-created as the v1alpha message of the same fields. */
function alphaResponse(
  response: ReflectionResponse["messageResponse"],
): grpcReflectionV1alpha.ServerReflectionResponse["messageResponse"] {
  const alpha = grpcReflectionV1alpha;
  switch (response.case) {
    case "fileDescriptorResponse":
      return {
        case: response.case,
        value: create(alpha.FileDescriptorResponseSchema, fieldsOf(response.value)),
      };
    case "allExtensionNumbersResponse":
      return {
        case: response.case,
        value: create(alpha.ExtensionNumberResponseSchema, fieldsOf(response.value)),
      };
    case "listServicesResponse":
      return {
        case: response.case,
        value: create(alpha.ListServiceResponseSchema, {
          service: response.value.service.map((s) => ({ name: s.name })),
        }),
      };
    case "errorResponse":
      return {
        case: response.case,
        value: create(alpha.ErrorResponseSchema, fieldsOf(response.value)),
      };
    default:
      return { case: undefined };
  }
}

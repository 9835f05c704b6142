import {
  attentionRequired,
  connectionRevoked,
  type FixedErrorSpec,
  fixedErrors,
  restErrorBodySchema,
} from "@atrium/kit";
import type { DescMethod } from "@bufbuild/protobuf";
import { descriptionOf } from "./comments.js";
import { componentRef, type OpenApiObject } from "./schemas.js";

/** Name of the error body schema nearly every failure answers with. */
export const errorSchemaName = "Error";

/** `restError` in packages/kit/src/errors.ts writes this body for every AtriumError. */
export const errorSchema: OpenApiObject = restErrorBodySchema;

/** A body that is the reason alone, as the registry (kit's fixed-errors.ts) declares it. */
const reasonOnlySchema = (spec: FixedErrorSpec<string>, description: string): OpenApiObject => ({
  type: "object",
  description,
  required: [spec.bodyField],
  properties: { [spec.bodyField]: { type: "string", enum: [spec.reason] } },
});

/** `body \`<field>: <reason>\`` of a fixed error, for the descriptions. */
const bodyOf = (spec: FixedErrorSpec<string>) => `body \`${spec.bodyField}: ${spec.reason}\``;

/** The two bodies the broker contract fixes word for word. */
const fixedBodySchemas: Record<string, OpenApiObject> = {
  AttentionRequired: reasonOnlySchema(
    attentionRequired.spec,
    "The connection needs a person to consent again; retrying will not help.",
  ),
  ConnectionRevoked: reasonOnlySchema(
    connectionRevoked.spec,
    "The connection was revoked; start a new connection flow.",
  ),
};

/** The fixed errors answered 422. */
const unprocessableReasons = fixedErrors
  .filter(({ spec }) => spec.httpStatus === 422)
  .map(({ spec }) => `\`${spec.reason}\``)
  .join(", ");

const retryAfter: OpenApiObject = {
  description: "Seconds after which a retry may succeed, when the service knows.",
  schema: { type: "integer", minimum: 0 },
};

const jsonBody = (schemaName: string) => ({
  content: { "application/json": { schema: componentRef(schemaName) } },
});

/** One reusable response per failure, named for `#/components/responses/<name>`. */
const errorResponses = {
  BadRequest: {
    status: "400",
    description: "InvalidArgument: a field is missing or malformed; the message names it.",
  },
  Unauthorized: {
    status: "401",
    description: "Unauthenticated: credentials are missing or not valid.",
  },
  Forbidden: {
    status: "403",
    description: "PermissionDenied: the caller is known but refused.",
  },
  NotFound: { status: "404", description: "NotFound: no such resource." },
  AlreadyExists: { status: "409", description: "AlreadyExists: the name is taken." },
  AttentionRequired: {
    status: "409",
    description: `The connection is in the attention state (${bodyOf(attentionRequired.spec)}).`,
    schema: "AttentionRequired",
  },
  ConnectionRevoked: {
    status: "410",
    description: `The connection was revoked (${bodyOf(connectionRevoked.spec)}).`,
    schema: "ConnectionRevoked",
  },
  PreconditionFailed: {
    status: "412",
    description: "FailedPrecondition: the resource's state does not allow this now.",
  },
  PayloadTooLarge: {
    status: "413",
    description: "The request body is larger than the service accepts (`bodyLimit`).",
  },
  Unprocessable: {
    status: "422",
    description: `The provider cannot check, or rejected, the credential (${unprocessableReasons}).`,
  },
  NotImplemented: {
    status: "501",
    description: "Unimplemented: the operation is Planned; its path and types are final.",
  },
  Unavailable: {
    status: "503",
    description: "Unavailable: a store or upstream cannot be reached; retry with backoff.",
    retryAfter: true,
  },
} as const satisfies Record<
  string,
  { status: string; description: string; schema?: string; retryAfter?: boolean }
>;

export type ErrorResponseName = keyof typeof errorResponses;

const responseRef = (name: ErrorResponseName) => `#/components/responses/${name}`;

/** `components.schemas` entries of the error bodies that `responses` refer to. */
export function errorSchemas(
  responses: Record<string, OpenApiObject>,
): Record<string, OpenApiObject> {
  const used = JSON.stringify(responses);
  return {
    [errorSchemaName]: errorSchema,
    ...Object.fromEntries(
      Object.entries(fixedBodySchemas).filter(([name]) =>
        used.includes(`"#/components/schemas/${name}"`),
      ),
    ),
  };
}

/** `components.responses`: those `refs` name, so a document holds no unused response. */
export function errorResponseComponents(refs: ReadonlySet<string>): Record<string, OpenApiObject> {
  const components: Record<string, OpenApiObject> = {};
  for (const name of Object.keys(errorResponses) as ErrorResponseName[]) {
    if (!refs.has(responseRef(name))) continue;
    const response: { description: string; schema?: string; retryAfter?: boolean } =
      errorResponses[name];
    components[name] = {
      description: response.description,
      ...(response.retryAfter ? { headers: { "Retry-After": retryAfter } } : {}),
      ...jsonBody(response.schema ?? errorSchemaName),
    };
  }
  return components;
}

/** Failures particular to an operation, beyond those every operation of its service has. */
export interface OperationErrors {
  /** Fully qualified method name, e.g. `broker.v1.BrokerService.RefreshConnection`. */
  [method: string]: readonly ErrorResponseName[];
}

/**
 * Planned operations answer Unimplemented before anything else (memory contract: "declared and
 * routable but their handlers return Unimplemented"); the proto comments mark them.
 */
export const isPlanned = (method: DescMethod) => /^Planned\b/.test(descriptionOf(method) ?? "");

export interface OperationErrorsOptions {
  /** Every operation of the service: auth, caller address, stores. */
  common: readonly ErrorResponseName[];
  /** Operation-specific failures. */
  particular: OperationErrors;
  /** Whether this operation is reachable without credentials. */
  exempt: boolean;
  hasBody: boolean;
  hasPathVariables: boolean;
}

/**
 * The `responses` entries for an operation's failures: 400 always (the input rule and JSON
 * parsing run on every route), 413 where a body is read, 404 where the path names a resource,
 * then the service's common ones and the operation's own; Planned ones answer 501 only.
 */
export function operationErrorResponses(
  method: DescMethod,
  options: OperationErrorsOptions,
): Record<string, OpenApiObject> {
  const names: ErrorResponseName[] = ["BadRequest"];
  // An exempt route still passes the caller address check, so it keeps 403.
  names.push(...options.common.filter((name) => !options.exempt || name !== "Unauthorized"));
  if (isPlanned(method)) {
    names.push("NotImplemented");
  } else {
    if (options.hasPathVariables) names.push("NotFound");
    if (options.hasBody) names.push("PayloadTooLarge");
    names.push(...(options.particular[`${method.parent.typeName}.${method.name}`] ?? []));
  }
  const responses: Record<string, OpenApiObject> = {};
  for (const name of new Set(names)) {
    const { status } = errorResponses[name];
    if (responses[status] !== undefined) {
      throw new Error(`${method.name}: two error responses for HTTP ${status}`);
    }
    responses[status] = { $ref: responseRef(name) };
  }
  return responses;
}

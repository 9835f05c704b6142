import { type HttpRule, http } from "@atrium/api";
import { settableFromQuery } from "@atrium/kit";
import {
  type DescField,
  type DescMessage,
  type DescMethod,
  getOption,
  hasOption,
} from "@bufbuild/protobuf";
import type { ServiceAccess } from "./access.js";
import { descriptionOf } from "./comments.js";
import { errorSchemaName, operationErrorResponses } from "./error-responses.js";
import { componentRef, type OpenApiObject, type SchemaCatalog } from "./schemas.js";

/** One REST binding of a method: its main google.api.http rule or an additional binding. */
export interface Operation {
  path: string;
  httpMethod: string;
  operation: OpenApiObject;
}

/**
 * The operations of a method, mirroring what the REST transcoder serves: the same path
 * templates, path variables, query parameters and bodies. Unannotated methods have none.
 */
export function methodOperations(
  method: DescMethod,
  catalog: SchemaCatalog,
  access?: ServiceAccess,
): Operation[] {
  if (!hasOption(method, http)) return [];
  const where = `${method.parent.typeName}.${method.name}`;
  if (method.methodKind !== "unary") {
    throw new Error(`${where}: ${method.methodKind} methods have no REST mapping`);
  }
  const rule = getOption(method, http);
  return [rule, ...rule.additionalBindings].map((binding, index) => {
    try {
      return bindingOperation(method, binding, index, catalog, access);
    } catch (error) {
      throw new Error(`${where}: ${(error as Error).message}`);
    }
  });
}

function bindingOperation(
  method: DescMethod,
  rule: HttpRule,
  index: number,
  catalog: SchemaCatalog,
  access: ServiceAccess | undefined,
): Operation {
  const { pattern } = rule;
  if (pattern.case === undefined) throw new Error("google.api.http rule has no method and path");
  const [httpMethod, template] =
    pattern.case === "custom"
      ? [pattern.value.kind, pattern.value.path]
      : [pattern.case, pattern.value];
  const { path, variables } = openApiPath(template);

  const parameters: OpenApiObject[] = variables.map((variable) => {
    const fields = resolveFieldPath(method.input, variable);
    return parameter(variable, "path", fields[fields.length - 1], catalog);
  });
  if (rule.body !== "*") {
    const skip = new Set([...variables, rule.body]);
    parameters.push(...queryParameters(method.input, "", skip, [], catalog));
  }

  const description = descriptionOf(method);
  const exempt = access?.exemptMethods?.has(method.name) ?? false;
  const operation: OpenApiObject = {
    operationId: `${method.parent.name}_${method.name}${index === 0 ? "" : `_${index}`}`,
    summary: method.name,
    ...(description ? { description } : {}),
    tags: [method.parent.name],
    ...(method.deprecated ? { deprecated: true } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    // Exempt routes take no credentials whatever the deployment switches on.
    ...(exempt ? { security: [] } : {}),
  };
  const requestSchema = requestBodySchema(method.input, rule.body, variables, catalog);
  if (requestSchema !== undefined) {
    operation.requestBody = { content: { "application/json": { schema: requestSchema } } };
  }
  const responseSchema =
    rule.responseBody === ""
      ? catalog.messageSchema(method.output)
      : catalog.valueSchema(topLevelField(method.output, rule.responseBody));
  operation.responses = {
    "200": {
      description: "OK",
      content: { "application/json": { schema: responseSchema } },
    },
    ...operationErrorResponses(method, {
      common: access?.commonErrors ?? [],
      particular: access?.particularErrors ?? {},
      exempt,
      hasBody: requestSchema !== undefined,
      hasPathVariables: variables.length > 0,
    }),
    default: {
      description: "Any other error (500 Internal), with the HTTP status its gRPC code maps to.",
      content: { "application/json": { schema: componentRef(errorSchemaName) } },
    },
  };
  return { path, httpMethod: httpMethod.toLowerCase(), operation };
}

/** `{field=*}` is `{field}` to OpenAPI; multi-segment patterns are not served, so not documented. */
function openApiPath(template: string): { path: string; variables: string[] } {
  const variables: string[] = [];
  const path = template.replace(
    /\{([^}=]+)(?:=([^}]*))?\}/g,
    (_, name: string, pattern?: string) => {
      if (pattern !== undefined && pattern !== "*") {
        throw new Error(`path variable pattern "${pattern}" in "${template}" spans segments`);
      }
      variables.push(name);
      return `{${name}}`;
    },
  );
  return { path, variables };
}

function requestBodySchema(
  input: DescMessage,
  body: string,
  variables: readonly string[],
  catalog: SchemaCatalog,
): OpenApiObject | undefined {
  if (body === "") return undefined;
  if (body !== "*") return catalog.fieldSchema(topLevelField(input, body));
  // Fields the path binds whole are not part of the body; the path wins over the body anyway.
  const bodyFields = input.fields.filter((f) => !variables.includes(f.name));
  return bodyFields.length === input.fields.length
    ? catalog.messageSchema(input)
    : catalog.objectSchema(input, bodyFields);
}

/**
 * Every field a query can set: scalars, enums, lists of them and textual well-known types,
 * reached through singular message fields with dotted names (`shelf.theme`).
 */
function queryParameters(
  message: DescMessage,
  prefix: string,
  skip: ReadonlySet<string>,
  visiting: readonly string[],
  catalog: SchemaCatalog,
): OpenApiObject[] {
  const enclosing = [...visiting, message.typeName];
  return message.fields.flatMap((field): OpenApiObject[] => {
    const name = `${prefix}${field.name}`;
    if (skip.has(name)) return [];
    if (settableFromQuery(field)) return [parameter(name, "query", field, catalog)];
    if (field.fieldKind !== "message") return [];
    const nested = field.message;
    if (nested.typeName.startsWith("google.protobuf.") || enclosing.includes(nested.typeName)) {
      return [];
    }
    return queryParameters(nested, `${name}.`, skip, enclosing, catalog);
  });
}

function parameter(
  name: string,
  location: "path" | "query",
  field: DescField,
  catalog: SchemaCatalog,
): OpenApiObject {
  const description = descriptionOf(field);
  return {
    name,
    in: location,
    ...(location === "path" ? { required: true } : {}),
    ...(description ? { description } : {}),
    ...(field.deprecated ? { deprecated: true } : {}),
    schema: catalog.valueSchema(field),
  };
}

function resolveFieldPath(message: DescMessage, path: string): DescField[] {
  const fields: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const name of path.split(".")) {
    const field: DescField | undefined =
      current === undefined ? undefined : topLevelField(current, name);
    if (field === undefined) throw new Error(`path variable "${path}" is no field`);
    fields.push(field);
    current = field.fieldKind === "message" ? field.message : undefined;
  }
  return fields;
}

function topLevelField(message: DescMessage, name: string): DescField {
  const field = message.fields.find((f) => f.name === name);
  if (field === undefined) throw new Error(`"${name}" is no field of ${message.typeName}`);
  return field;
}

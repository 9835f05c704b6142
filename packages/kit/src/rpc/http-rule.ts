import { type HttpRule, http } from "@atrium/api";
import { type DescMethod, getOption, hasOption } from "@bufbuild/protobuf";

/** One REST binding of an RPC, from its google.api.http option or one of its additional_bindings. */
export interface HttpBinding {
  /** Upper-case HTTP method. */
  readonly httpMethod: string;
  /** Path template as written in the proto. */
  readonly path: string;
  /** "" (no body), "*" (the whole request) or the name of one request field. */
  readonly body: string;
  /** "" (the whole response) or the name of one response field. */
  readonly responseBody: string;
}

/** The REST bindings declared on a method; empty when it is served over gRPC only. */
export function readHttpBindings(method: DescMethod): HttpBinding[] {
  if (!hasOption(method, http)) return [];
  const rule = getOption(method, http);
  // additional_bindings may not nest further, so one level is all there is.
  return [rule, ...rule.additionalBindings].map((r) => toBinding(method, r));
}

function toBinding(method: DescMethod, rule: HttpRule): HttpBinding {
  const { pattern } = rule;
  const where = `${method.parent.typeName}.${method.name}`;
  switch (pattern.case) {
    case undefined:
      throw new Error(`${where}: google.api.http rule has no method and path`);
    case "custom":
      return {
        httpMethod: pattern.value.kind.toUpperCase(),
        path: pattern.value.path,
        body: rule.body,
        responseBody: rule.responseBody,
      };
    default:
      return {
        httpMethod: pattern.case.toUpperCase(),
        path: pattern.value,
        body: rule.body,
        responseBody: rule.responseBody,
      };
  }
}

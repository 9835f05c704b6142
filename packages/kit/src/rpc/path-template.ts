/**
 * A google.api.http path template, restricted to what maps one-to-one onto a Fastify route:
 * literal segments, single-segment variables (`{field}`, `{a.b}`, `{field=*}`) and a trailing
 * custom verb (`:verb`). Multi-segment patterns (`{name=shelves/*}`, `**`) are rejected at start-up
 * rather than served with a different meaning.
 */
export interface PathTemplate {
  readonly segments: readonly PathSegment[];
  readonly verb: string | undefined;
}

export type PathSegment =
  | { readonly kind: "literal"; readonly value: string }
  | { readonly kind: "variable"; readonly fieldPath: readonly string[] };

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
const literal = /^[A-Za-z0-9._~!$&'()+,;=@%-]+$/;

export function parsePathTemplate(template: string): PathTemplate {
  const fail = (reason: string) => new Error(`path template "${template}": ${reason}`);
  if (!template.startsWith("/")) throw fail("must start with /");

  let path = template.slice(1);
  let verb: string | undefined;
  const lastSlash = path.lastIndexOf("/");
  const colon = path.indexOf(":", lastSlash + 1);
  if (colon >= 0 && !path.slice(colon).includes("}")) {
    verb = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!literal.test(verb)) throw fail(`invalid verb "${verb}"`);
  }

  const segments = splitSegments(path).map((raw): PathSegment => {
    if (raw.startsWith("{") && raw.endsWith("}")) {
      const [field, pattern] = raw.slice(1, -1).split("=", 2);
      if (pattern !== undefined && pattern !== "*") {
        throw fail(`variable pattern "${pattern}" spans segments; only {field} and {field=*}`);
      }
      const fieldPath = field.split(".");
      if (!fieldPath.every((name) => identifier.test(name))) {
        throw fail(`invalid field path "${field}"`);
      }
      return { kind: "variable", fieldPath };
    }
    if (raw === "*" || raw === "**") throw fail(`anonymous wildcard "${raw}" binds no field`);
    if (!literal.test(raw)) throw fail(`invalid segment "${raw}"`);
    return { kind: "literal", value: raw };
  });
  return { segments, verb };
}

/** Splits on the slashes outside variables, so `{name=shelves/*}` stays one segment. */
function splitSegments(path: string): string[] {
  const segments: string[] = [];
  let start = 0;
  let depth = 0;
  for (let i = 0; i < path.length; i++) {
    if (path[i] === "{") depth++;
    else if (path[i] === "}") depth--;
    else if (path[i] === "/" && depth === 0) {
      segments.push(path.slice(start, i));
      start = i + 1;
    }
  }
  segments.push(path.slice(start));
  return segments;
}

/** A Fastify route for a template, with the route parameter that carries each bound field. */
export interface FastifyRoutePath {
  readonly url: string;
  readonly variables: readonly { readonly param: string; readonly fieldPath: readonly string[] }[];
}

export function toFastifyRoutePath(template: PathTemplate): FastifyRoutePath {
  const variables: { param: string; fieldPath: readonly string[] }[] = [];
  const parts = template.segments.map((segment) => {
    if (segment.kind === "literal") return segment.value;
    // Route parameter names cannot contain dots; the index keeps nested paths apart.
    const param = `p${variables.length}`;
    variables.push({ param, fieldPath: segment.fieldPath });
    return `:${param}`;
  });
  // A literal colon in a Fastify route is written "::".
  const verb = template.verb === undefined ? "" : `::${template.verb}`;
  return { url: `/${parts.join("/")}${verb}`, variables };
}

/**
 * The path a client calls: the template with each variable replaced by its field's value,
 * percent-encoded as one segment (a `/` in an id stays inside its segment).
 */
export function fillPathTemplate(
  template: PathTemplate,
  fieldValue: (fieldPath: readonly string[]) => string,
): string {
  const parts = template.segments.map((segment) =>
    segment.kind === "literal" ? segment.value : encodeURIComponent(fieldValue(segment.fieldPath)),
  );
  const verb = template.verb === undefined ? "" : `:${template.verb}`;
  return `/${parts.join("/")}${verb}`;
}

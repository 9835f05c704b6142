import { fixedErrors } from "./fixed-errors.js";

/** The fixed errors whose body is this shape (a reason in `code`, and a message). */
const codedReasons = fixedErrors
  .filter(({ spec }) => spec.bodyField === "code" && spec.restMessage)
  .map(({ spec }) => `\`${spec.reason}\``);

/** RestErrorBody as JSON Schema, for the OpenAPI documents (generated and route-collected). */
export const restErrorBodySchema = {
  type: "object",
  description:
    "The body of an error response: the gRPC code's name, or a token the contract fixes " +
    `(${[...codedReasons, "`invalid_argument`"].join(", ")}), and a message.`,
  required: ["code", "message"],
  properties: {
    code: { type: "string", description: "The gRPC status code name, e.g. `NotFound`." },
    message: { type: "string", description: "What went wrong, for a human." },
  },
} as const;

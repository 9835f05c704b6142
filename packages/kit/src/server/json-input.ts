import type { DescMessage } from "@bufbuild/protobuf";
import type { UniversalHandlerOptions } from "@connectrpc/connect/protocol";
import { checkJsonValues } from "../rpc/strict-json.js";
import { checkRequestInput } from "./input-rule.js";
import type { TransportLimits } from "./transport-limits.js";

type JsonOptions = NonNullable<UniversalHandlerOptions["jsonOptions"]>;

/**
 * Connect's JSON options for one method's input. Connect ignores unknown JSON fields (as binary
 * gRPC keeps unknown fields), so the input rule on the decoded message never sees them: a
 * 10,000-level unknown field passed where REST answered 400. Connect has no hook between
 * `JSON.parse` and the proto3 parse but its text decoder, so the rule REST applies to its body
 * (input-rule.ts, strict-json.ts) runs there, on a parse of its own, and refusals leave as
 * InvalidArgument. Text that is not JSON is left to Connect's parse, which says so.
 */
export function jsonInputOptions(
  input: DescMessage,
  limits: Pick<TransportLimits, "nestingDepth">,
): JsonOptions {
  const utf8 = new TextDecoder();
  const options = {
    textDecoder: {
      decode(data: Uint8Array): string {
        const text = utf8.decode(data);
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          return text;
        }
        checkRequestInput(json, "", limits.nestingDepth);
        if (typeof json === "object" && json !== null && !Array.isArray(json)) {
          checkJsonValues(input, json as Parameters<typeof checkJsonValues>[1]);
        }
        return text;
      },
    },
  };
  // Connect's JSON serialization reads `textDecoder` from these options (its
  // JsonSerializationOptions), though the handler options' type does not list it; the
  // transport-limits test over Connect fails if that ever stops being so.
  return options as JsonOptions;
}

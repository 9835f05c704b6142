import { type DescMessage, fromJson, type MessageShape, toJson } from "@bufbuild/protobuf";

/**
 * Copies a broker message into the gateway message of the same field names. Through proto JSON,
 * so the public contract can differ from the broker's (fields added, dropped) without mapping
 * code per message.
 */
export function bridge<From extends DescMessage, To extends DescMessage>(
  from: From,
  message: MessageShape<From>,
  to: To,
): MessageShape<To> {
  return fromJson(to, toJson(from, message, { useProtoFieldName: true }), {
    ignoreUnknownFields: true,
  });
}

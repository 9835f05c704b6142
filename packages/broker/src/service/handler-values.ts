import { callerAddressKey } from "@atrium/kit";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { CallerContext } from "../audit/audit-log.js";

/** What the audit log records about the caller of an RPC, on either transport. */
export function callerFrom(context: HandlerContext): CallerContext {
  return {
    callerIp: context.values.get(callerAddressKey),
    userAgent: context.requestHeader.get("user-agent") ?? "",
  };
}

export const ts = (date: Date | null | undefined): Timestamp | undefined =>
  date ? timestampFromDate(date) : undefined;

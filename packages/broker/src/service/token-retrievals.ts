import { type brokerV1, ErrorInfoSchema } from "@atrium/api";
import {
  AtriumError,
  Code,
  forwardedCallerKey,
  type Logger,
  normalizeHandlerError,
} from "@atrium/kit";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { CallerContext } from "../audit/audit-log.js";
import type { ConnectionService } from "../connections/connection-service.js";
import type { TokenView } from "../connections/token-read.js";
import { callerFrom, ts } from "./handler-values.js";

type TokenMessage = MessageInitShape<typeof brokerV1.TokenResponseSchema>;

/** Most retrievals in one GetConnectionTokens call. */
export const maxTokenRetrievals = 100;

/** The answer of one retrieval, shared by GetConnectionToken and GetConnectionTokens. */
export async function retrieveToken(
  connections: ConnectionService,
  request: { id: string; workspaceId: string },
  caller: CallerContext,
): Promise<TokenMessage> {
  return tokenMessage(
    await connections.token(request.id, request.workspaceId || undefined, caller),
  );
}

function tokenMessage({ connection: row, credential, strategy }: TokenView): TokenMessage {
  return {
    connectionId: row.id,
    authType: row.auth_type,
    status: row.status,
    healthStatus: row.health_status,
    accessToken: credential.access_token ?? "",
    tokenType: credential.token_type ?? "",
    expiresAt: ts(row.expires_at),
    scopes: row.scopes,
    idToken: credential.id_token ?? "",
    apiKey: credential.api_key ?? "",
    username: credential.username ?? "",
    password: credential.password ?? "",
    nameId: credential.name_id ?? "",
    attributes: credential.attributes ?? {},
    strategy,
  };
}

/**
 * GetConnectionTokens: the connections are loaded by one query, then each retrieval is served as
 * GetConnectionToken serves it, with the caller its own call would have had (its forwarded
 * address under the same trusted-proxy rule and allowlist); the audit writer's group commit
 * gathers their rows. A retrieval's error is answered in its place as the gRPC error it would
 * have been, unexpected ones as a bare Internal, logged here (the call's own error path never
 * sees them).
 */
export function createTokenRetrievals(connections: ConnectionService, logger: Logger) {
  const failed = (error: unknown) => {
    const normalized = normalizeHandlerError(error, logger, "token retrieval failed");
    return {
      result: {
        case: "error" as const,
        value: {
          code: normalized.code,
          message: normalized.rawMessage,
          retryAfterSeconds: Number(normalized.metadata.get("retry-after") ?? 0),
          errorInfo: normalized.findDetails(ErrorInfoSchema)[0],
        },
      },
    };
  };

  return async function getConnectionTokens(
    request: brokerV1.GetConnectionTokensRequest,
    context: HandlerContext,
  ): Promise<MessageInitShape<typeof brokerV1.GetConnectionTokensResponseSchema>> {
    if (request.retrievals.length > maxTokenRetrievals) {
      throw new AtriumError(
        Code.InvalidArgument,
        `retrievals: at most ${maxTokenRetrievals} per call, got ${request.retrievals.length}`,
      );
    }
    const batchCaller = callerFrom(context);
    const resolveForwarded = context.values.get(forwardedCallerKey);
    // A retrieval whose caller address is refused is answered alone and never read.
    const reads = request.retrievals.map((retrieval) => {
      try {
        return {
          id: retrieval.request?.id ?? "",
          workspaceId: retrieval.request?.workspaceId || undefined,
          caller: {
            callerIp: resolveForwarded
              ? resolveForwarded(retrieval.forwardedFor)
              : batchCaller.callerIp,
            userAgent: retrieval.userAgent || batchCaller.userAgent,
          },
        };
      } catch (error) {
        return error instanceof Error ? error : new Error(String(error));
      }
    });
    const served = await connections.tokens(
      reads.filter((read): read is Exclude<typeof read, Error> => !(read instanceof Error)),
    );
    let next = 0;
    const results = reads.map((read) => {
      if (read instanceof Error) return failed(read);
      const outcome = served[next++];
      return outcome.status === "fulfilled"
        ? { result: { case: "token" as const, value: tokenMessage(outcome.value) } }
        : failed(outcome.reason);
    });
    return { results };
  };
}

/** Any non-2xx answer from an Atrium service; `body` is the parsed JSON (or the raw text). */
export class AtriumHttpError extends Error {
  readonly status: number;
  readonly body: unknown;
  /** `code` (or `error`) from a JSON error body, when there is one. */
  readonly code: string | undefined;

  constructor(status: number, body: unknown, message?: string) {
    super(message ?? `HTTP ${status}: ${describeBody(body)}`);
    this.name = new.target.name;
    this.status = status;
    this.body = body;
    this.code = errorCodeOf(body);
  }
}

/** A non-2xx answer from the gateway that is none of the typed cases below. */
export class GatewayError extends AtriumHttpError {}

/**
 * 409 `{"error":"attention_required"}`: the provider refused a refresh (invalid_grant, MFA,
 * CAPTCHA). Retrying cannot help; a human has to redo the consent.
 */
export class AttentionRequiredError extends GatewayError {
  readonly connectionId: string;

  constructor(connectionId: string, status: number, body: unknown) {
    super(status, body, `connection ${connectionId} needs a human to redo the consent`);
    this.connectionId = connectionId;
  }
}

/** 410 `{"code":"connection_revoked"}`: terminal; start a new connection flow. */
export class ConnectionRevokedError extends GatewayError {
  readonly connectionId: string;

  constructor(connectionId: string, status: number, body: unknown) {
    super(status, body, `connection ${connectionId} was revoked; start a new connection flow`);
    this.connectionId = connectionId;
  }
}

/** 400 `connection_not_active`: the connection is neither active nor revoked (e.g. failed). */
export class ConnectionNotActiveError extends GatewayError {
  readonly connectionId: string;

  constructor(connectionId: string, status: number, body: unknown) {
    super(status, body, `connection ${connectionId} is not active: ${describeBody(body)}`);
    this.connectionId = connectionId;
  }
}

/** Picks the typed gateway error for an answer about one connection. */
export function gatewayErrorFor(
  status: number,
  body: unknown,
  connectionId: string | undefined,
): GatewayError {
  const code = errorCodeOf(body);
  if (connectionId !== undefined) {
    if (status === 409 && code === "attention_required") {
      return new AttentionRequiredError(connectionId, status, body);
    }
    if (status === 410 && code === "connection_revoked") {
      return new ConnectionRevokedError(connectionId, status, body);
    }
    if (status === 400 && code === "connection_not_active") {
      return new ConnectionNotActiveError(connectionId, status, body);
    }
  }
  return new GatewayError(status, body);
}

function errorCodeOf(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { error, code } = body as { error?: unknown; code?: unknown };
  if (typeof error === "string") return error;
  return typeof code === "string" ? code : undefined;
}

function describeBody(body: unknown): string {
  if (typeof body === "string") return body.slice(0, 200);
  if (typeof body === "object" && body !== null) {
    const { message } = body as { message?: unknown };
    if (typeof message === "string") return message;
    return JSON.stringify(body).slice(0, 200);
  }
  return String(body);
}

import { AtriumError, Code } from "../errors.js";

export type AuthMechanism = "mtls" | "api_key" | "jwt";

/**
 * Unauthenticated (or, where a contract says a wrong credential is 403, PermissionDenied),
 * carrying the mechanism that said no so the host can log it.
 */
export class AuthenticationError extends AtriumError {
  constructor(
    readonly mechanism: AuthMechanism,
    message: string,
    code: Code.Unauthenticated | Code.PermissionDenied = Code.Unauthenticated,
  ) {
    super(code, message);
    this.name = "AuthenticationError";
  }
}

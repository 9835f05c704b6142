import { AtriumError, Code } from "../errors.js";

export type AuthMechanism = "mtls" | "api_key" | "jwt";

/** Unauthenticated, carrying the mechanism that said no so the host can log it. */
export class AuthenticationError extends AtriumError {
  constructor(
    readonly mechanism: AuthMechanism,
    message: string,
  ) {
    super(Code.Unauthenticated, message);
    this.name = "AuthenticationError";
  }
}

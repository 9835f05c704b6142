// oidc-provider ships no type declarations; the tests use a small, explicit part of it.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface GrantInstance {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(
      req: IncomingMessage,
      res: ServerResponse,
    ): Promise<{ uid: string; prompt: { name: string }; params: Record<string, unknown> }>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: new (init: {
      accountId: string;
      clientId: string;
    }) => GrantInstance;
    use(
      middleware: (
        ctx: { path: string; oidc?: { params?: Record<string, unknown> } },
        next: () => Promise<void>,
      ) => Promise<void>,
    ): void;
    on(event: string, listener: (...args: unknown[]) => void): void;
  }
}

import { AtriumError, Code } from "@atrium/kit";
import type { FastifyInstance } from "fastify";
import { parseJsonKeepingParamNumbers } from "./exact-json.js";

const PROVIDER_PATH = /^\/providers\/[^/?]+(?:\?|$)/;

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The REST details the transcoder cannot know: exact-text numbers in provider params, PATCH field
 * presence, and the IdP's form post. (Caller address and allowlist are the service host's.)
 */
export function configureBrokerRest(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    try {
      const text = String(body);
      const parsed = text.trim() === "" ? {} : parseJsonKeepingParamNumbers(text);
      // PATCH merges what was sent: the body's keys become the update mask.
      if (
        request.method === "PATCH" &&
        PROVIDER_PATH.test(request.url) &&
        parsed !== null &&
        typeof parsed === "object" &&
        !Array.isArray(parsed)
      ) {
        const query = request.query as Record<string, unknown>;
        if (query && query.update_mask === undefined) {
          const keys = Object.keys(parsed).map(camel);
          if (keys.length > 0) query.update_mask = keys.join(",");
        }
      }
      done(null, parsed);
    } catch (error) {
      done(
        error instanceof AtriumError
          ? error
          : new AtriumError(Code.InvalidArgument, (error as Error).message),
        undefined,
      );
    }
  });

  // SAML HTTP-POST binding: the IdP's browser form posts SAMLResponse and RelayState.
  app.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string" },
    (_request, body, done) => {
      const form = new URLSearchParams(String(body));
      done(null, {
        saml_response: form.get("SAMLResponse") ?? "",
        relay_state: form.get("RelayState") ?? "",
      });
    },
  );
}

export interface CorsPolicy {
  /** The Access-Control-Allow-Origin value for this Origin, or undefined to send none. */
  allowOrigin(origin: string | undefined): string | undefined;
}

/**
 * With a list, exact origins only ("*" in the list allows any http(s) origin). Without one, the
 * spec's current behaviour: any http or https origin.
 */
export function createCorsPolicy(allowedOrigins: string[] | undefined): CorsPolicy {
  const anyWeb = allowedOrigins === undefined || allowedOrigins.includes("*");
  const exact = new Set(
    (allowedOrigins ?? []).map((origin) => origin.replace(/\/$/, "").toLowerCase()),
  );
  return {
    allowOrigin(origin) {
      if (!origin) return undefined;
      if (exact.has(origin.toLowerCase())) return origin;
      return anyWeb && /^https?:\/\/[^/]+$/i.test(origin) ? origin : undefined;
    },
  };
}

/** Receives an error thrown by a pub/sub message handler; the other handlers still run. */
export type HandlerErrorReporter = (error: unknown, channel: string) => void;

export const warnHandlerError: HandlerErrorReporter = (error, channel) => {
  const detail = error instanceof Error ? error.message : String(error);
  process.emitWarning(`message handler on channel "${channel}" threw: ${detail}`, {
    code: "ATRIUM_CACHE_HANDLER",
  });
};

/** A key watch that could not be set up, or whose change handler threw; it keeps trying. */
export const warnKeyWatchError = (error: unknown) => {
  const detail = error instanceof Error ? error.message : String(error);
  process.emitWarning(`watching cache keys failed: ${detail}`, { code: "ATRIUM_CACHE_KEY_WATCH" });
};

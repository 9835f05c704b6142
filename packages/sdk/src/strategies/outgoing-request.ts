/** A request about to leave through a fetcher, with its body already buffered for signing. */
export interface OutgoingRequest {
  url: URL;
  method: string;
  headers: Headers;
  body: Uint8Array | undefined;
}

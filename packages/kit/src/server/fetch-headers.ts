/** Node's header object (a request's, a response's, an injected answer's) as a Fetch Headers. */
export function toFetchHeaders(
  headers: Readonly<Record<string, string | string[] | number | undefined>>,
): Headers {
  const result = new Headers();
  for (const name in headers) {
    // HTTP/2 pseudo-headers (":path") are not valid header names.
    if (name.charCodeAt(0) === 58 /* ":" */) continue;
    const value = headers[name];
    if (Array.isArray(value)) for (const item of value) result.append(name, item);
    else if (value !== undefined) result.append(name, String(value));
  }
  return result;
}

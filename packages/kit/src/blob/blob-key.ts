import { invalidArgument } from "../errors.js";

/** S3's limit on a key, in UTF-8 bytes. */
const maxKeyBytes = 1024;

/**
 * Accepts only keys that mean the same thing on every store: relative, `/`-separated, with no
 * empty, `.` or `..` segment. A key valid on S3 therefore never escapes a filesystem root.
 */
export function assertValidBlobKey(key: string): void {
  const reject = (why: string) =>
    invalidArgument(`invalid blob key ${JSON.stringify(key)}: ${why}`);
  if (key.length === 0) throw reject("it is empty");
  if (Buffer.byteLength(key, "utf8") > maxKeyBytes) throw reject(`it exceeds ${maxKeyBytes} bytes`);
  if (key.startsWith("/")) throw reject("it is absolute");
  if (key.includes("\\") || key.includes("\0")) throw reject("it contains a backslash or NUL");
  for (const segment of key.split("/")) {
    if (segment === "" || segment === "." || segment === "..") {
      throw reject("it has an empty, '.' or '..' segment");
    }
  }
}

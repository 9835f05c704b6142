import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Where `npm run build -w @atrium/console` writes the bundled console (index.html, app.js, app.css). */
export const consoleAssetsDir = fileURLToPath(new URL("../public/", import.meta.url));

/** False when the console was not bundled (a checkout where only `tsc -b` ran). */
export function consoleIsBuilt(): boolean {
  return existsSync(`${consoleAssetsDir}index.html`);
}

/**
 * The policy every console response carries: scripts and styles only from the console's own
 * files (no inline code, no CDN), API calls only to its origin, never framed.
 */
export const consoleContentSecurityPolicy =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

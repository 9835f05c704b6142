// Bundles the browser app into public/ (served by the gateway at /console); nothing is fetched
// from a CDN at run time.
import { copyFile, mkdir } from "node:fs/promises";
import { build } from "esbuild";

const out = new URL("./public/", import.meta.url);
await mkdir(out, { recursive: true });
await build({
  entryPoints: [new URL("./app/main.tsx", import.meta.url).pathname],
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  outfile: new URL("app.js", out).pathname,
  logLevel: "warning",
});
await copyFile(new URL("./app/index.html", import.meta.url), new URL("index.html", out));
await copyFile(new URL("./app/app.css", import.meta.url), new URL("app.css", out));
await copyFile(new URL("./app/favicon.svg", import.meta.url), new URL("favicon.svg", out));

#!/usr/bin/env node
// npm links a workspace's bin only when the file exists at install time, and dist/ is built
// after `npm ci`, so the link points at this committed file, which loads the build.
const main = new URL("../dist/main.js", import.meta.url);
await import(main.href).catch((error) => {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !error.message.includes(main.pathname)) throw error;
  console.error("atriumctl is not built yet: run `make build` in the repository root first");
  process.exit(1);
});

export * from "./servers.js";
export * from "./test-postgres.js";
export * from "./eventually.js";

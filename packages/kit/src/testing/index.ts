export * from "./eventually.js";
export * from "./servers.js";
export * from "./test-postgres.js";

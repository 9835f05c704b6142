export * from "./eventually.js";
export * from "./redis-connections.js";
export * from "./servers.js";
export * from "./test-postgres.js";

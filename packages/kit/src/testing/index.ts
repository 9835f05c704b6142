export { blobContract, type OpenBlobStore } from "./blob-contract.js";
export { cacheContract, type OpenCache } from "./cache-contract.js";
export * from "./eventually.js";
export * from "./otlp-receiver.js";
export { type OpenQueue, queueContract } from "./queue-contract.js";
export * from "./redis-connections.js";
export * from "./servers.js";
export * from "./test-postgres.js";
export * from "./webhook-receiver.js";

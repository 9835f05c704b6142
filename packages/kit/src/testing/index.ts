export * from "./servers.js";

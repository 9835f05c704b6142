export { type CliIo, exitCodes, runCli } from "./cli.js";
export { VERSION } from "./version.js";

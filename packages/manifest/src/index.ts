export { runCli } from "./cli.js";
export { type CliIo, exitCodes } from "./cli-io.js";
export { VERSION } from "./version.js";

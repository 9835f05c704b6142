import { type ParsedArgs, parseArgs, UsageError, usage } from "./cli-args.js";
import { type CliIo, exitCodes } from "./cli-io.js";
import { VERSION } from "./version.js";

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let args: ParsedArgs;
  try {
    args = parseArgs(argv, io.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`Error: ${error.message}\n\n${usage()}`);
    return exitCodes.error;
  }
  if (args.help || !args.command) {
    (args.help ? io.stdout : io.stderr).write(usage());
    return args.help ? exitCodes.ok : exitCodes.error;
  }
  if (args.command === "version") {
    io.stdout.write(`atriumctl ${VERSION}\n`);
    return exitCodes.ok;
  }
  try {
    // Loaded on demand so `version` and usage work without the broker's rule modules.
    const { runManifestCommand } = await import("./manifest-command.js");
    return await runManifestCommand(args.command, args, io);
  } catch (error) {
    io.stderr.write(`Error: ${(error as Error).message}\n`);
    return exitCodes.error;
  }
}

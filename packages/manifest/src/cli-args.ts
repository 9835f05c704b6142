export const commands = ["validate", "plan", "apply", "version"] as const;
export type Command = (typeof commands)[number];

interface FlagSpec {
  kind: "string" | "boolean" | "number";
  help: string;
}

/** Every flag also reads `ATRIUM_<NAME>` (upper case, dashes as underscores) when not given. */
export const flagSpecs = {
  file: { kind: "string", help: "manifest file, or directory of <name>.yaml files" },
  secrets: {
    kind: "string",
    help: "placeholder source: env (default), sops:<path>, gcpsm:<project>",
  },
  "require-encrypted-secrets": { kind: "boolean", help: "refuse plaintext secrets" },
  "auto-approve": { kind: "boolean", help: "apply without asking for confirmation" },
  prune: { kind: "boolean", help: "delete providers absent from the manifest" },
  "secret-prefix": { kind: "string", help: "prefix of secret manager ids (gcpsm)" },
  "broker-url": { kind: "string", help: "broker REST base URL (default http://localhost:8081)" },
  "broker-api-key": { kind: "string", help: "broker API key, sent as X-API-Key" },
  parallelism: { kind: "number", help: "concurrent broker requests (default 8)" },
} satisfies Record<string, FlagSpec>;

export type FlagName = keyof typeof flagSpecs;

export interface ParsedArgs {
  command?: Command;
  help: boolean;
  /** Flag values from the command line or the environment, as given. */
  values: Partial<Record<FlagName, string>>;
}

export class UsageError extends Error {}

export function envName(flag: FlagName): string {
  return `ATRIUM_${flag.toUpperCase().replaceAll("-", "_")}`;
}

/** Go-style flags (`-file x`, `-file=x`, `-prune`) and their `--` spellings, in any position. */
export function parseArgs(argv: string[], env: NodeJS.ProcessEnv): ParsedArgs {
  const parsed: ParsedArgs = { help: false, values: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h" || arg === "-help" || arg === "--help" || arg === "help") {
      parsed.help = true;
      continue;
    }
    if (!arg.startsWith("-") || arg === "-" || arg === "--") {
      if (parsed.command) throw new UsageError(`unexpected argument "${arg}"`);
      if (!(commands as readonly string[]).includes(arg))
        throw new UsageError(`unknown command "${arg}"`);
      parsed.command = arg as Command;
      continue;
    }
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq < 0 ? body : body.slice(0, eq);
    if (!(name in flagSpecs)) throw new UsageError(`unknown flag "${arg}"`);
    const flag = name as FlagName;
    const spec: FlagSpec = flagSpecs[flag];
    let value: string;
    if (eq >= 0) value = body.slice(eq + 1);
    else if (spec.kind === "boolean") value = "true";
    else if (i + 1 < argv.length) value = argv[++i];
    else throw new UsageError(`flag "${arg}" needs a value`);
    parsed.values[flag] = checkValue(flag, spec, value);
  }
  for (const flag of Object.keys(flagSpecs) as FlagName[]) {
    const fromEnv = env[envName(flag)];
    if (parsed.values[flag] === undefined && fromEnv !== undefined && fromEnv !== "") {
      parsed.values[flag] = checkValue(flag, flagSpecs[flag], fromEnv);
    }
  }
  return parsed;
}

function checkValue(flag: FlagName, spec: FlagSpec, value: string): string {
  if (spec.kind === "boolean" && !/^(true|false|1|0)$/i.test(value)) {
    throw new UsageError(`-${flag} must be true or false, got "${value}"`);
  }
  if (spec.kind === "number" && !/^[1-9]\d*$/.test(value)) {
    throw new UsageError(`-${flag} must be a positive integer, got "${value}"`);
  }
  return value;
}

export function flagEnabled(args: ParsedArgs, flag: FlagName): boolean {
  return /^(true|1)$/i.test(args.values[flag] ?? "");
}

export function usage(): string {
  const flags = Object.entries(flagSpecs).map(
    ([name, spec]) => `  -${name}${spec.kind === "boolean" ? "" : " <value>"}\n      ${spec.help}`,
  );
  return [
    "Usage: atriumctl <command> [flags]",
    "",
    "Commands:",
    "  validate   check the manifest offline with the broker's registration rules",
    "  plan       show the field-level diff against the broker (exit 0 none, 2 changes, 1 error)",
    "  apply      show the plan, confirm, and reconcile the broker",
    "  version    print the version",
    "",
    "Flags (also --name; each reads ATRIUM_<NAME> when not given):",
    ...flags,
    "",
  ].join("\n");
}

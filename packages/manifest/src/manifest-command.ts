import { createInterface } from "node:readline";
import { applyPlan } from "./apply.js";
import { createBrokerClient } from "./broker-client.js";
import { type Command, flagEnabled, type ParsedArgs } from "./cli-args.js";
import { type CliIo, exitCodes } from "./cli-io.js";
import { fetchLiveProviders } from "./live-providers.js";
import { formatProblem } from "./manifest-problem.js";
import { computePlan } from "./plan.js";
import { renderPlan } from "./plan-render.js";
import { prepareManifest } from "./prepare-manifest.js";
import { createProgressBar } from "./progress.js";
import { computeWebhookPlan } from "./webhook-plan.js";

const defaultParallelism = 8;
const defaultBrokerUrl = "http://localhost:8081";

/** validate, plan and apply: the manifest checks first, then (plan, apply) the broker. */
export async function runManifestCommand(
  command: Command,
  args: ParsedArgs,
  io: CliIo,
): Promise<number> {
  const file = args.values.file;
  if (!file) throw new Error("-file is required (or ATRIUM_FILE)");
  const prepared = await prepareManifest({
    file,
    // Offline validate resolves only when asked; plan and apply always need real values.
    secrets: args.values.secrets ?? (command === "validate" ? undefined : "env"),
    secretPrefix: args.values["secret-prefix"] ?? "",
    requireEncrypted: flagEnabled(args, "require-encrypted-secrets"),
    env: io.env,
  });
  if (prepared.problems.length > 0) {
    const count = prepared.problems.length;
    io.stderr.write(`Error: ${count} problem${count === 1 ? "" : "s"} in the manifest:\n`);
    for (const problem of prepared.problems) io.stderr.write(`  ${formatProblem(problem)}\n`);
    return exitCodes.error;
  }
  if (command === "validate") {
    const count = prepared.providers.length;
    const hooks = prepared.webhooks.length;
    const webhooks = hooks > 0 ? `, ${hooks} webhook${hooks === 1 ? "" : "s"}` : "";
    io.stdout.write(
      `The manifest is valid: ${count} provider${count === 1 ? "" : "s"}${webhooks}.\n`,
    );
    return exitCodes.ok;
  }

  const brokerUrl = args.values["broker-url"] ?? defaultBrokerUrl;
  const apiKey = args.values["broker-api-key"];
  if (!apiKey) throw new Error("-broker-api-key is required (or ATRIUM_BROKER_API_KEY)");
  const client = createBrokerClient({ baseUrl: brokerUrl, apiKey });
  const parallelism = Number(args.values.parallelism ?? defaultParallelism);
  const live = await fetchLiveProviders(client, parallelism);
  const prune = flagEnabled(args, "prune");
  const plan = computePlan(prepared.providers, live, { prune });
  // A manifest without a webhooks section leaves subscriptions alone, even under -prune.
  const webhookPlan = prepared.declaresWebhooks
    ? computeWebhookPlan(prepared.webhooks, await client.listWebhooks(), { prune })
    : { changes: [], orphans: [] };
  io.stdout.write(renderPlan(plan, webhookPlan));
  const total = plan.changes.length + webhookPlan.changes.length;
  if (command === "plan") return total > 0 ? exitCodes.changes : exitCodes.ok;
  if (total === 0) return exitCodes.ok;

  if (!flagEnabled(args, "auto-approve")) {
    if (!io.stdin.isTTY) {
      io.stderr.write(
        "Error: apply needs confirmation: run it on a terminal or pass -auto-approve\n",
      );
      return exitCodes.error;
    }
    if (!(await confirm(io))) {
      io.stderr.write("Apply cancelled.\n");
      return exitCodes.error;
    }
  }
  const failures = await applyPlan(
    plan.changes,
    { client, concurrency: parallelism, onProgress: createProgressBar(io.stderr, "Applying") },
    webhookPlan.changes,
  );
  const applied = total - failures.length;
  io.stdout.write(`Apply: ${applied} of ${total} changes applied.\n`);
  if (failures.length === 0) return exitCodes.ok;
  const webhookFailures = failures.filter((f) => f.kind === "webhook").length;
  const noun =
    webhookFailures === 0 ? "provider" : webhookFailures === failures.length ? "webhook" : "change";
  io.stderr.write(`Error: ${failures.length} ${noun}${failures.length === 1 ? "" : "s"} failed:\n`);
  for (const failure of failures) {
    io.stderr.write(`  ${failure.name} (${failure.action}): ${failure.reason}\n`);
  }
  return exitCodes.error;
}

async function confirm(io: CliIo): Promise<boolean> {
  io.stderr.write("Apply these changes? Only 'yes' is accepted: ");
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    // A closed stdin answers nothing, which is not a yes.
    const answer = await new Promise<string>((resolve) => {
      rl.once("line", resolve);
      rl.once("close", () => resolve(""));
    });
    return answer.trim() === "yes";
  } finally {
    rl.close();
  }
}

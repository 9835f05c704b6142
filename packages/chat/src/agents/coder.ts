import {
  type AgentResult,
  ask,
  memoryNotes,
  noLlmHint,
  runTool,
  type StepContext,
  type SubAgent,
  think,
} from "../kernel/step-context.js";
import { runInSandbox, type SandboxLimits, type SandboxResult } from "./code-sandbox.js";

export interface CoderOptions {
  sandbox?: SandboxLimits;
  /** Write-run-fix rounds per run. Default 3. */
  maxAttempts?: number;
}

const fence = /```(?:javascript|js|mjs|typescript|ts)?[^\S\n]*\n([\s\S]*?)```/i;

function codeBlockIn(text: string): string | undefined {
  return fence.exec(text)?.[1]?.trim() || undefined;
}

const instructions = [
  "Write JavaScript that solves the task and prints the answer with console.log.",
  "It runs in a sandbox: plain ECMAScript only, no require/import, no network, no filesystem, no timers.",
  "Reply with exactly one ```javascript code block and nothing else.",
].join(" ");

function describe(run: SandboxResult) {
  return {
    ok: run.ok,
    output: run.output,
    result: run.result,
    error: run.error,
    duration_ms: run.durationMs,
  };
}

/**
 * Has the LLM write JavaScript, runs it in the sandbox and feeds errors back for another try.
 * Without an LLM it can only run a code block the message itself contains.
 */
export function createCoder(options: CoderOptions = {}): SubAgent {
  const maxAttempts = options.maxAttempts ?? 3;
  return {
    role: "coder",
    async run(step: StepContext): Promise<AgentResult> {
      const execute = (code: string) =>
        runTool(
          step,
          "coder",
          "sandbox.run",
          { code },
          () => runInSandbox(code, { ...options.sandbox, signal: step.signal }),
          describe,
        );
      const given = codeBlockIn(step.task);
      if (!step.llm) {
        if (!given) {
          return {
            status: "failure",
            summary: `No LLM is configured to write code (${noLlmHint}), and the message contains no code block to run.`,
          };
        }
        const run = await execute(given);
        return outcome(given, run, 1);
      }
      const context = [
        ...step.earlier.map((e) => `${e.role} found: ${e.summary}`),
        memoryNotes(step),
      ]
        .filter(Boolean)
        .join("\n");
      const conversation: { role: "user" | "assistant"; content: string }[] = [
        {
          role: "user",
          content: `${instructions}\n\nTask: ${step.task}${context ? `\n\nContext:\n${context}` : ""}`,
        },
      ];
      let last: { code: string; run: SandboxResult } | undefined;
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        const reply = await ask(
          step,
          "coder",
          attempt === 1 ? "write_code" : "fix_code",
          conversation,
          {
            streamThinking: true,
          },
        );
        const code = codeBlockIn(reply) ?? reply.trim();
        const run = await execute(code);
        last = { code, run };
        if (run.ok) return outcome(code, run, attempt);
        await think(step, "act", `attempt ${attempt} failed: ${run.error}`);
        if (step.budget.remainingTokens() <= 0 || step.signal.aborted) break;
        conversation.push(
          { role: "assistant", content: reply },
          {
            role: "user",
            content: `It failed:\n${run.error}\nOutput so far:\n${run.output}\nFix it. ${instructions}`,
          },
        );
      }
      return last
        ? outcome(last.code, last.run, maxAttempts)
        : { status: "failure", summary: "no code was written" };
    },
  };
}

function outcome(code: string, run: SandboxResult, attempts: number): AgentResult {
  const printed = run.output.trim() || run.result || "(no output)";
  if (run.ok) {
    return {
      status: "success",
      summary: printed,
      payload: { code, output: run.output, result: run.result, attempts },
    };
  }
  return {
    status: "failure",
    summary: `The code failed: ${run.error}`,
    payload: { code, output: run.output, error: run.error, attempts },
  };
}

import { createBrowser } from "../agents/browser.js";
import type { SandboxLimits } from "../agents/code-sandbox.js";
import { createCoder } from "../agents/coder.js";
import { createCommunicator } from "../agents/communicator.js";
import { chatGatewayClient, type GatewaySettings } from "../agents/gateway-client.js";
import { createResearcher } from "../agents/researcher.js";
import { createUrlPolicy } from "../agents/url-policy.js";
import { type LlmClient, LlmError } from "../llm/llm-client.js";
import type { MemoryContext, MemoryGateway, MemoryScope } from "../memory/memory-gateway.js";
import type { TraceBus } from "../trace/trace-bus.js";
import { type Budget, BudgetExhaustedError, BudgetTracker, defaultBudgets } from "./budget.js";
import type {
  AgentRole,
  ChatKernel,
  KernelInput,
  KernelOutput,
  PendingItem,
  Source,
  TokenUsage,
} from "./kernel-types.js";
import { routeStep } from "./role-router.js";
import {
  type AgentResult,
  noLlmHint,
  runTool,
  type StepContext,
  type SubAgent,
  think,
} from "./step-context.js";

export interface KernelOptions {
  traceBus: TraceBus;
  /** Without one, routing uses the classifier and sub-agents their non-LLM fallbacks. */
  llm?: LlmClient;
  memory?: MemoryGateway;
  /** Hosts the researcher and browser may open (see createUrlPolicy). Default none. */
  allowedHosts?: string[];
  chromiumPath?: string;
  communicatorWebhookUrl?: string;
  /** The credential gateway; with it the communicator can send with a broker connection. */
  gateway?: GatewaySettings;
  /** The connection the communicator sends with when a request names none. */
  communicatorConnectionId?: string;
  /** Where that connection sends when a request names no `send_url`. */
  communicatorSendUrl?: string;
  /** Messages are sent only with `context.approved === true` unless false. Default true. */
  requireSendApproval?: boolean;
  sandbox?: SandboxLimits;
  budgets?: Partial<Record<AgentRole, Partial<Budget>>>;
  /** Replaces sub-agents, e.g. to run one against a different tool. */
  agents?: Partial<Record<AgentRole, SubAgent>>;
}

/** What a yielded step keeps for its resume: where in the plan it paused and what it had. */
interface KernelCheckpoint {
  role: AgentRole;
  route: { by: string; reason: string };
  /** The plan entry whose run yielded; the resume runs it again. */
  index: number;
  earlier: (AgentResult & { role: AgentRole })[];
  memory?: MemoryContext;
  usage: TokenUsage;
  steps: number;
}

function checkpointOf(value: unknown): KernelCheckpoint {
  const c = value as KernelCheckpoint | undefined;
  if (
    !c ||
    typeof c !== "object" ||
    !(c.role in plans) ||
    !Number.isInteger(c.index) ||
    c.index < 0 ||
    c.index >= plans[c.role].length ||
    !Array.isArray(c.earlier)
  ) {
    throw new Error("the step's checkpoint cannot be resumed by this kernel");
  }
  return c;
}

interface PlannedRun {
  role: AgentRole;
  /** A helper gathers material for the run after it; its success does not end the step. */
  helper?: boolean;
}

/** What runs when the routed role fails: the coder asks the researcher, then tries again. */
const plans: Record<AgentRole, PlannedRun[]> = {
  coder: [{ role: "coder" }, { role: "researcher", helper: true }, { role: "coder" }],
  researcher: [{ role: "researcher" }, { role: "coder" }],
  browser: [{ role: "browser" }, { role: "researcher" }],
  communicator: [{ role: "communicator" }],
};

/**
 * Why a planned fallback would do nothing, so that the trace does not announce it: without an
 * LLM the coder can only run the message's own code block (the router's ``` cue), once, and
 * nothing a helper finds can change that.
 */
function pointlessWithoutLlm(
  step: StepContext,
  planned: PlannedRun,
  index: number,
): string | undefined {
  if (step.llm || index === 0) return undefined;
  if (planned.helper) return "without an LLM the coder cannot use what it would find";
  if (planned.role !== "coder") return undefined;
  if (step.earlier.some((run) => run.role === "coder")) {
    return "without an LLM it would run the same code block again";
  }
  if (!step.task.includes("```")) {
    return `without an LLM it can only run a code block, and the message has none (${noLlmHint})`;
  }
  return undefined;
}

function scopeOf(input: KernelInput): MemoryScope {
  const text = (v: unknown, fallback: string) => (typeof v === "string" && v !== "" ? v : fallback);
  return {
    tenantId: text(input.context.tenant_id, "default"),
    userId: text(input.context.user_id, "anonymous"),
    agentId: input.agentId,
    sessionId: typeof input.context.session_id === "string" ? input.context.session_id : undefined,
  };
}

function dedupeSources(results: AgentResult[]): Source[] {
  const seen = new Set<string>();
  const sources: Source[] = [];
  for (const s of results.flatMap((r) => r.sources ?? [])) {
    if (seen.has(s.url)) continue;
    seen.add(s.url);
    sources.push(s);
  }
  return sources;
}

/**
 * The OODA kernel: observe (memory context for the agent's scope), orient (route to a role),
 * decide (the next planned run within the budget), act (run the sub-agent), and loop through
 * the role's fallbacks until one succeeds or yields, or the budget runs out.
 */
export function createKernel(options: KernelOptions): ChatKernel {
  const policy = createUrlPolicy(options.allowedHosts ?? []);
  const agents: Record<AgentRole, SubAgent> = {
    researcher: createResearcher({ memory: options.memory, policy }),
    coder: createCoder({ sandbox: options.sandbox }),
    browser: createBrowser({ policy, chromiumPath: options.chromiumPath }),
    communicator: createCommunicator({
      webhookUrl: options.communicatorWebhookUrl,
      gateway: options.gateway && chatGatewayClient(options.gateway),
      connectionId: options.communicatorConnectionId,
      sendUrl: options.communicatorSendUrl,
      // A credential goes only to hosts named in the list: "*" opens pages, never sends tokens.
      sendPolicy: createUrlPolicy((options.allowedHosts ?? []).filter((h) => h.trim() !== "*")),
      requireApproval: options.requireSendApproval,
    }),
    ...options.agents,
  };
  const budgetFor = (role: AgentRole): Budget => ({
    ...defaultBudgets[role],
    ...options.budgets?.[role],
  });

  async function observe(step: StepContext): Promise<MemoryContext | undefined> {
    const memory = options.memory;
    if (!memory) return undefined;
    try {
      return await runTool(
        step,
        "kernel",
        "memory.context",
        {
          tenant_id: step.scope.tenantId,
          user_id: step.scope.userId,
          agent_id: step.scope.agentId,
        },
        () => memory.context(step.scope, step.task, step.signal),
        (c) => ({ recent: c.recent.length, pages: c.pages.length }),
      );
    } catch {
      await think(step, "observe", "memory is unavailable; going on without context");
      return undefined;
    }
  }

  async function act(step: StepContext, role: AgentRole): Promise<AgentResult> {
    try {
      return await agents[role].run(step);
    } catch (error) {
      if (error instanceof LlmError && error.isAuthFailure) {
        return {
          status: "yield",
          summary: "The LLM provider rejected the configured credentials.",
          pending: [
            {
              kind: "credentials",
              detail: `the LLM provider answered HTTP ${error.status}: check LLM_API_KEY`,
            },
          ],
        };
      }
      if (error instanceof BudgetExhaustedError) throw error;
      if (step.signal.aborted) {
        const reason = step.signal.reason;
        throw reason instanceof BudgetExhaustedError
          ? reason
          : new Error("the request was cancelled");
      }
      return {
        status: "failure",
        summary: `${role} failed: ${(error as Error).message ?? String(error)}`,
      };
    }
  }

  return {
    traceBus: options.traceBus,
    async execute(input: KernelInput): Promise<KernelOutput> {
      const budget = new BudgetTracker(budgetFor("researcher"));
      const wall = new AbortController();
      let timer = setTimeout(
        () => wall.abort(new BudgetExhaustedError("time")),
        budget.remainingMs(),
      );
      const step: StepContext = {
        task: input.task,
        systemPrompt: input.systemPrompt,
        context: input.context,
        agentId: input.agentId,
        scope: scopeOf(input),
        trace: input.trace,
        signal: input.signal ? AbortSignal.any([input.signal, wall.signal]) : wall.signal,
        llm: options.llm,
        memory: undefined,
        earlier: [],
        budget,
      };
      try {
        const resumed = input.resume ? checkpointOf(input.resume.checkpoint) : undefined;
        let route: { role: AgentRole; by: string; reason: string };
        let start = 0;
        if (resumed) {
          // What was observed and decided before the pause holds: no memory read, no routing.
          step.memory = resumed.memory;
          step.earlier.push(...resumed.earlier.slice(0, -1));
          step.resumed = resumed.earlier.at(-1);
          budget.add(resumed.usage);
          budget.steps = resumed.steps;
          route = { ...resumed.route, role: resumed.role };
          start = resumed.index;
          await think(
            step,
            "decide",
            `continuing ${resumed.role} where the step paused, with ${resumed.earlier.length - 1} earlier runs and ${resumed.usage.total_tokens} tokens already spent`,
          );
        } else {
          step.memory = await observe(step);
          if (step.memory) {
            await think(
              step,
              "observe",
              `loaded ${step.memory.recent.length} recent events and ${step.memory.pages.length} relevant memories`,
            );
          }
          route = await routeStep(step);
          await think(step, "orient", `routing to ${route.role} (${route.by}: ${route.reason})`);
        }
        budget.use(budgetFor(route.role));
        clearTimeout(timer);
        timer = setTimeout(
          () => wall.abort(new BudgetExhaustedError("time")),
          Math.max(budget.remainingMs(), 0),
        );

        let final: (AgentResult & { role: AgentRole }) | undefined;
        // When every run fails, the routed role's own account says best what was missing.
        let routedRun: (AgentResult & { role: AgentRole }) | undefined;
        let exhausted: BudgetExhaustedError | undefined;
        let pausedAt = start;
        const plan = plans[route.role];
        for (const [index, planned] of plan.entries()) {
          if (index < start) continue;
          exhausted = budget.exhausted();
          if (exhausted) break;
          const pointless = pointlessWithoutLlm(step, planned, index);
          if (pointless) {
            await think(step, "decide", `not running ${planned.role}: ${pointless}`);
            if (planned.helper) break;
            continue;
          }
          await think(
            step,
            "decide",
            index === start
              ? `running ${planned.role}`
              : `${plan[index - 1].role} ${planned.helper ? "needs material" : "did not succeed"}; running ${planned.role}`,
          );
          budget.steps++;
          let result: AgentResult;
          try {
            result = await act(step, planned.role);
          } catch (error) {
            if (!(error instanceof BudgetExhaustedError)) throw error;
            exhausted = error;
            break;
          }
          const run = { ...result, role: planned.role };
          step.earlier.push(run);
          if (!planned.helper) routedRun ??= run;
          if (result.status === "yield" || (result.status === "success" && !planned.helper)) {
            final = run;
            pausedAt = index;
            break;
          }
          if (planned.helper && result.status === "failure") break;
        }
        final ??= routedRun ?? step.earlier.at(-1);
        const status = final?.status ?? "failure";
        let summary = final?.summary ?? "Nothing could be done for this message.";
        if (exhausted && status !== "success")
          summary = `${summary}\n\n(Stopped: ${exhausted.message}.)`;
        const pending: PendingItem[] = status === "yield" ? (final?.pending ?? []) : [];
        if (status === "success" && options.memory) {
          // An extractive answer (no LLM) quotes memory or pages back: stored as the agent's
          // own reply, a later search would quote the quote as new evidence; as source memory it
          // stays in the window and search leaves it out.
          const quotes =
            (final?.payload as { extractive?: unknown } | undefined)?.extractive === true;
          await options.memory
            .remember(step.scope, input.task, summary, quotes ? "memory" : "agent")
            .catch(() => think(step, "act", "could not store this turn in memory"));
        }
        return {
          status,
          summary,
          payload: final?.payload,
          metadata: {
            role: route.role,
            route: { by: route.by, reason: route.reason },
            runs: step.earlier.map((r) => ({ role: r.role, status: r.status })),
            tokens: { ...budget.usage },
            sources: dedupeSources(step.earlier),
            pending,
            budget: { ...budget.limits, steps_used: budget.steps, exhausted: exhausted?.resource },
            ...(status === "yield"
              ? {
                  checkpoint: {
                    role: route.role,
                    route: { by: route.by, reason: route.reason },
                    index: pausedAt,
                    earlier: step.earlier,
                    memory: step.memory,
                    usage: { ...budget.usage },
                    steps: budget.steps,
                  } satisfies KernelCheckpoint,
                }
              : {}),
          },
        };
      } catch (error) {
        if (error instanceof BudgetExhaustedError || step.signal.aborted) {
          const reason =
            error instanceof BudgetExhaustedError ? error.message : "the request was cancelled";
          return {
            status: "failure",
            summary: `Stopped: ${reason}.`,
            metadata: { tokens: { ...budget.usage }, sources: dedupeSources(step.earlier) },
          };
        }
        throw error;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

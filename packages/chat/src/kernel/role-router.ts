import { urlsIn } from "../agents/url-policy.js";
import { type AgentRole, agentRoles } from "./kernel-types.js";
import { ask, type StepContext, think } from "./step-context.js";

export interface RouteDecision {
  role: AgentRole;
  /** `context` (explicit `context.role`), `llm` or `classifier`. */
  by: "context" | "llm" | "classifier";
  reason: string;
}

const isRole = (value: unknown): value is AgentRole =>
  typeof value === "string" && (agentRoles as readonly string[]).includes(value);

const cues: Record<AgentRole, RegExp[]> = {
  communicator: [
    // "tell" asks someone to be told ("tell Bob …"); "tell me …" is a question to the agent.
    /\b(send|e-?mail|notify|reply to|message to|tell(?!\s+me\b)|announce|post (?:to|in|on)|slack|draft)\b/i,
  ],
  browser: [/\b(open|navigate|browse|visit|go to|click|screenshot|web ?page|website)\b/i],
  coder: [
    /```/,
    /\b(code|function|script|program|implement|javascript|typescript|regex|algorithm|compute|calculate|debug|refactor|sort|parse)\b/i,
    /\d+(\.\d+)?\s*[-+*/^%]\s*\d+/,
  ],
  researcher: [
    /\b(what|who|why|when|where|how|explain|research|find|summari[sz]e|compare|tell me about)\b/i,
  ],
};

// Ties go to the role listed first: an explicit action beats a question about it.
const priority: AgentRole[] = ["browser", "communicator", "coder", "researcher"];

/**
 * The deterministic router used when no LLM is configured (or the LLM router fails): counts the
 * cue patterns of each role in the message. The browser needs a URL in the message to score;
 * with no cue at all the researcher answers.
 */
export function classifyRole(message: string): RouteDecision {
  const hasUrl = urlsIn(message).length > 0;
  let best: AgentRole = "researcher";
  let bestScore = 0;
  for (const role of priority) {
    if (role === "browser" && !hasUrl) continue;
    const score = cues[role].reduce((n, cue) => n + (cue.test(message) ? 1 : 0), 0);
    if (score > bestScore) {
      best = role;
      bestScore = score;
    }
  }
  return {
    role: best,
    by: "classifier",
    reason:
      bestScore === 0
        ? "no cue matched; research is the default"
        : `matched ${bestScore} ${best} cue(s)`,
  };
}

const routeSchema = {
  name: "route",
  schema: {
    type: "object",
    properties: {
      role: { type: "string", enum: [...agentRoles] },
      reason: { type: "string" },
    },
    required: ["role", "reason"],
    additionalProperties: false,
  },
};

const routerPrompt = `Pick the sub-agent for the user's message.
researcher: questions, facts, research, summaries of known material.
coder: writing or running code, calculations, data transformation.
browser: opening a specific web page or site and reading or acting on it.
communicator: drafting or sending a message, e-mail or notification to someone.
Answer as JSON {"role": ..., "reason": ...}.`;

/** Orient: `context.role` wins; else the LLM router (structured output); else the classifier. */
export async function routeStep(step: StepContext): Promise<RouteDecision> {
  const explicit = step.context.role;
  if (isRole(explicit)) return { role: explicit, by: "context", reason: "context.role" };
  if (explicit !== undefined) {
    await think(step, "orient", `ignoring unknown context.role ${JSON.stringify(explicit)}`);
  }
  if (!step.llm) return classifyRole(step.task);
  try {
    const text = await ask(
      step,
      "router",
      "route",
      [
        { role: "system", content: routerPrompt },
        { role: "user", content: step.task },
      ],
      { jsonSchema: routeSchema },
    );
    const parsed = JSON.parse(text) as { role?: unknown; reason?: unknown };
    if (isRole(parsed.role)) {
      return { role: parsed.role, by: "llm", reason: String(parsed.reason ?? "") };
    }
    await think(step, "orient", "the LLM router answered no known role; classifying instead");
  } catch (error) {
    await think(
      step,
      "orient",
      `the LLM router failed (${(error as Error).message}); classifying instead`,
    );
  }
  return classifyRole(step.task);
}

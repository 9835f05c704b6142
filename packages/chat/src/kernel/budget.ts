import type { AgentRole, TokenUsage } from "./kernel-types.js";

/** What one chat step may spend on a role, across its fallbacks. */
export interface Budget {
  /** Sub-agent runs, fallbacks included. */
  maxSteps: number;
  /** LLM tokens (prompt + completion), router included. */
  maxTokens: number;
  maxWallMs: number;
}

export const defaultBudgets: Record<AgentRole, Budget> = {
  researcher: { maxSteps: 3, maxTokens: 24_000, maxWallMs: 90_000 },
  coder: { maxSteps: 3, maxTokens: 32_000, maxWallMs: 120_000 },
  browser: { maxSteps: 2, maxTokens: 16_000, maxWallMs: 90_000 },
  communicator: { maxSteps: 2, maxTokens: 8_000, maxWallMs: 60_000 },
};

export class BudgetExhaustedError extends Error {
  constructor(readonly resource: "steps" | "tokens" | "time") {
    super(`the step's ${resource} budget is exhausted`);
    this.name = "BudgetExhaustedError";
  }
}

/** Counts what a step spent; the wall-clock limit is also an abort signal for its work. */
export class BudgetTracker {
  readonly usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  steps = 0;
  private readonly started = Date.now();
  private budget: Budget;

  constructor(budget: Budget) {
    this.budget = budget;
  }

  /** Switches to the routed role's budget; what was already spent still counts. */
  use(budget: Budget): void {
    this.budget = budget;
  }

  get limits(): Budget {
    return this.budget;
  }

  remainingMs(): number {
    return this.budget.maxWallMs - (Date.now() - this.started);
  }

  remainingTokens(): number {
    return this.budget.maxTokens - this.usage.total_tokens;
  }

  /** Why no further sub-agent run may start, or undefined when one may. */
  exhausted(): BudgetExhaustedError | undefined {
    if (this.steps >= this.budget.maxSteps) return new BudgetExhaustedError("steps");
    if (this.remainingTokens() <= 0) return new BudgetExhaustedError("tokens");
    if (this.remainingMs() <= 0) return new BudgetExhaustedError("time");
    return undefined;
  }

  add(usage: TokenUsage): void {
    this.usage.prompt_tokens += usage.prompt_tokens;
    this.usage.completion_tokens += usage.completion_tokens;
    this.usage.total_tokens += usage.total_tokens;
  }
}

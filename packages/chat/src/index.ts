/** The system Chromium the browser tool drives (also what the console browser tests launch). */
export { findChromium } from "./agents/browser.js";
export { runInSandbox, type SandboxLimits, type SandboxResult } from "./agents/code-sandbox.js";
export { type AgentConfig, loadAgentConfig } from "./config/chat-config.js";
export { type Budget, defaultBudgets } from "./kernel/budget.js";
export { createKernel, type KernelOptions } from "./kernel/kernel.js";
export {
  type AgentRole,
  agentRoles,
  type ChatKernel,
  type KernelInput,
  type KernelOutput,
  type KernelStatus,
  type PendingItem,
  type Source,
  type TokenUsage,
} from "./kernel/kernel-types.js";
export { classifyRole, type RouteDecision } from "./kernel/role-router.js";
export type { AgentResult, StepContext, SubAgent } from "./kernel/step-context.js";
export {
  createLlmClient,
  type LlmClient,
  type LlmConfig,
  LlmError,
  type LlmTier,
} from "./llm/llm-client.js";
export {
  createMemoryGateway,
  type MemoryGateway,
  type MemoryGatewayOptions,
} from "./memory/memory-gateway.js";
export type { ChatRequest } from "./router/chat-request.js";
export type { ChatResponse } from "./router/chat-response.js";
export { type ChatRouterOptions, createChatRouter } from "./router/chat-router.js";
export { type BusyPolicy, busyPolicies } from "./runs/run-manager.js";
export {
  type RunRecord,
  type RunStatus,
  type RunStore,
  runStatuses,
} from "./runs/run-store.js";
export { chatDescriptionPath, chatOpenApiDocument } from "./service/chat-description.js";
export {
  chatMountPrefix,
  type StartAgentServiceOptions,
  startAgentService,
} from "./service/start-chat-service.js";
export {
  chatMigrationsDir,
  createSqlTraceStore,
  migrateChat,
  type SqlTraceStore,
  type SqlTraceStoreOptions,
} from "./trace/sql-trace-store.js";
export {
  createTraceBus,
  type TraceBus,
  type TraceBusOptions,
  type TraceEmitter,
  traceChannel,
} from "./trace/trace-bus.js";
export { type TraceEvent, type TraceEventType, traceEventTypes } from "./trace/trace-event.js";
export { TraceHistoryError, type TraceStore } from "./trace/trace-store.js";

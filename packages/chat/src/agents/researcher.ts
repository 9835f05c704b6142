import type { Source } from "../kernel/kernel-types.js";
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
import type { MemoryGateway } from "../memory/memory-gateway.js";
import { fetchReadablePage, type ReadablePage } from "./readable-page.js";
import { type UrlPolicy, urlsIn } from "./url-policy.js";

export interface ResearcherOptions {
  memory?: MemoryGateway;
  policy: UrlPolicy;
  /** Pages fetched per run. Default 3. */
  maxPages?: number;
  /**
   * Memory hits scoring below this are not used (SearchMemory's similarity_score, 0–1). Default
   * 0.25: on REALTALK it keeps 77 % of the first hits that hold the evidence and 38 % of those
   * that do not.
   */
  minRelevance?: number;
}

interface Finding {
  source: Source;
  text: string;
}

const sentences = (text: string, n: number) =>
  (text.match(/[^.!?]+[.!?]+(\s|$)/g) ?? [text]).slice(0, n).join("").trim();

/**
 * A finding's leading sentences, after its title unless the title is only the start of the text
 * (a memory's title is its first 80 characters): a source is quoted once.
 */
function extract(finding: Finding): string {
  const lead = sentences(finding.text, 2);
  const title = finding.source.title;
  return finding.text.startsWith(title) ? lead : `${title}: ${lead}`;
}

/**
 * Searches the memory service and reads the allowed pages the message names, then answers from
 * what it found: with the LLM when one is configured, extractively (the leading sentences of each
 * source) when not.
 */
export function createResearcher(options: ResearcherOptions): SubAgent {
  const maxPages = options.maxPages ?? 3;
  const minRelevance = options.minRelevance ?? 0.25;
  return {
    role: "researcher",
    async run(step: StepContext): Promise<AgentResult> {
      const findings: Finding[] = [];
      if (options.memory) {
        const memory = options.memory;
        try {
          const hits = await runTool(
            step,
            "researcher",
            "memory.search",
            { query: step.task, limit: 5 },
            () => memory.search(step.scope, step.task, 5, step.signal),
            (r) => r.map((h) => ({ content: h.content.slice(0, 200), similarity: h.similarity })),
          );
          const relevant = hits.filter((h) => h.similarity >= minRelevance);
          if (hits.length > 0 && relevant.length === 0) {
            await think(step, "act", "memory has nothing relevant to this");
          }
          for (const hit of relevant) {
            findings.push({
              source: {
                title: hit.content.slice(0, 80),
                url: `memory://${hit.sourceType}/${hit.sourceId}`,
                source: "memory",
              },
              text: hit.content,
            });
          }
        } catch {
          await think(step, "act", "memory search failed; going on without it");
        }
      }
      const urls = urlsIn(step.task);
      const refused = urls.filter((u) => !options.policy.allows(u));
      for (const url of urls.filter((u) => options.policy.allows(u)).slice(0, maxPages)) {
        try {
          const page: ReadablePage = await runTool(
            step,
            "researcher",
            "web.fetch",
            { url },
            () => fetchReadablePage(url, { policy: options.policy, signal: step.signal }),
            (p) => ({ url: p.url, title: p.title, chars: p.text.length }),
          );
          findings.push({
            source: { title: page.title, url: page.url, source: "web" },
            text: page.text,
          });
        } catch {
          // The tool_result event carries the reason; other sources may still answer.
        }
      }
      const pending = refused.map((url) => ({
        kind: "approval" as const,
        detail: `opening ${url} needs approval: its host is not in AGENT_ALLOWED_HOSTS`,
      }));
      if (refused.length > 0 && findings.length === 0) {
        return {
          status: "yield",
          summary: `I may not open ${refused.join(", ")}: pages open only on hosts named in AGENT_ALLOWED_HOSTS (for example AGENT_ALLOWED_HOSTS=${refused.map((u) => new URL(u).hostname).join(",")}).`,
          pending,
        };
      }
      const sources = findings.map((f) => f.source);
      if (!step.llm) {
        if (findings.length === 0) {
          return {
            status: "failure",
            summary: `I found nothing relevant to this in memory or the given pages, and no LLM is configured to answer from general knowledge (${noLlmHint}).`,
          };
        }
        const summary = [...new Set(findings.map(extract))].slice(0, 3).join("\n\n");
        return { status: "success", summary, sources, payload: { extractive: true }, pending };
      }
      const material = findings
        .map((f, i) => `[${i + 1}] ${f.source.title} (${f.source.url})\n${f.text.slice(0, 6000)}`)
        .join("\n\n");
      const earlier = step.earlier.map((e) => `${e.role}: ${e.summary}`).join("\n");
      const answer = await ask(
        step,
        "researcher",
        "answer",
        [
          {
            role: "user",
            content: [
              `Question: ${step.task}`,
              material
                ? `Sources (cite as [n]):\n${material}`
                : "No sources were found; answer from general knowledge and say so.",
              earlier ? `Earlier attempts in this step:\n${earlier}` : "",
              memoryNotes(step),
            ]
              .filter(Boolean)
              .join("\n\n"),
          },
        ],
        { streamThinking: true },
      );
      return { status: "success", summary: answer.trim(), sources, pending };
    },
  };
}

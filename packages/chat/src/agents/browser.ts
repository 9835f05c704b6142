import { existsSync } from "node:fs";
import {
  type AgentResult,
  ask,
  runTool,
  type StepContext,
  type SubAgent,
} from "../kernel/step-context.js";
import { extractReadable, fetchReadablePage, type ReadablePage } from "./readable-page.js";
import { type UrlPolicy, urlsIn } from "./url-policy.js";

export interface BrowserOptions {
  policy: UrlPolicy;
  /** Chromium or Chrome binary; when unset, the usual system paths are tried. */
  chromiumPath?: string;
  navigationTimeoutMs?: number;
}

const systemChromiums = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
];

export function findChromium(configured?: string): string | undefined {
  if (configured) return existsSync(configured) ? configured : undefined;
  return systemChromiums.find((p) => existsSync(p));
}

interface BrowsedPage extends ReadablePage {
  via: "chromium" | "http";
  note?: string;
}

/** Loads a page in headless Chromium; the caller handles failures. */
async function openInChromium(
  executablePath: string,
  url: string,
  policy: UrlPolicy,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<ReadablePage> {
  signal.throwIfAborted();
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    // Containers commonly run as root, where Chromium's own sandbox cannot start.
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
    timeout: timeoutMs,
  });
  // A cancelled step closes its browser at once; the navigation in flight then fails.
  const close = () => void browser.close().catch(() => undefined);
  signal.addEventListener("abort", close, { once: true });
  try {
    signal.throwIfAborted();
    const context = await browser.newContext({ javaScriptEnabled: true });
    // Every request the page makes is held to the same policy as the page itself.
    await context.route("**/*", (route) =>
      policy.allows(route.request().url()) ? route.continue() : route.abort("blockedbyclient"),
    );
    const page = await context.newPage();
    await page.goto(url, { waitUntil: "domcontentloaded", timeout: timeoutMs });
    const html = await page.content();
    const readable = extractReadable(html, page.url());
    return { ...readable, title: (await page.title()) || readable.title };
  } finally {
    signal.removeEventListener("abort", close);
    await browser.close();
  }
}

/**
 * Opens the page the message names in headless Chromium (playwright-core with the system
 * browser) and reports what it shows. Without a usable Chromium it fetches the page over plain
 * HTTP instead and says so in the answer, since scripts then did not run.
 */
export function createBrowser(options: BrowserOptions): SubAgent {
  const timeoutMs = options.navigationTimeoutMs ?? 30_000;
  return {
    role: "browser",
    async run(step: StepContext): Promise<AgentResult> {
      const url = urlsIn(step.task)[0];
      if (!url) return { status: "failure", summary: "The message names no URL to open." };
      if (!options.policy.allows(url)) {
        return {
          status: "yield",
          summary: `I may not open ${url}: pages open only on hosts named in AGENT_ALLOWED_HOSTS (for example AGENT_ALLOWED_HOSTS=${new URL(url).hostname}); context.approved does not open pages.`,
          pending: [
            {
              kind: "approval",
              detail: `opening ${url} needs approval: its host is not in AGENT_ALLOWED_HOSTS`,
            },
          ],
        };
      }
      const page: BrowsedPage = await runTool(
        step,
        "browser",
        "browser.open",
        { url },
        async (): Promise<BrowsedPage> => {
          const executable = findChromium(options.chromiumPath);
          let reason = "no Chromium found (set CHROMIUM_PATH)";
          if (executable) {
            try {
              return {
                ...(await openInChromium(executable, url, options.policy, timeoutMs, step.signal)),
                via: "chromium" as const,
              };
            } catch (error) {
              step.signal.throwIfAborted();
              reason = `Chromium failed: ${(error as Error).message.split("\n")[0]}`;
            }
          }
          const fetched = await fetchReadablePage(url, {
            policy: options.policy,
            signal: step.signal,
          });
          return {
            ...fetched,
            via: "http" as const,
            note: `${reason}; fetched over plain HTTP, so page scripts did not run`,
          };
        },
        (p) => ({ url: p.url, title: p.title, via: p.via, note: p.note, chars: p.text.length }),
      );
      const note = page.note ? `\n\n(Note: ${page.note}.)` : "";
      let summary: string;
      if (step.llm) {
        summary = await ask(
          step,
          "browser",
          "read_page",
          [
            {
              role: "user",
              content: `Task: ${step.task}\n\nPage "${page.title}" (${page.url}):\n${page.text.slice(0, 8000)}\n\nDo what the task asks with this page.`,
            },
          ],
          { streamThinking: true },
        );
      } else {
        summary = `${page.title}: ${page.text.slice(0, 500)}`;
      }
      return {
        status: "success",
        summary: `${summary.trim()}${note}`,
        sources: [{ title: page.title, url: page.url, source: "browser" }],
        payload: {
          url: page.url,
          title: page.title,
          via: page.via,
          text: page.text.slice(0, 20_000),
        },
      };
    },
  };
}

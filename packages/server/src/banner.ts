import type { RunningService } from "@atrium/kit";
import { devMcpScope, serviceLines } from "./launch.js";

export interface BannerOptions {
  devKeysPath: string;
  dataDir: string;
  gatewayUrl: string;
  /** The development gateway key; MCP's lines are printed only when the gateway runs with it. */
  devGatewayKey: string | undefined;
  /** Absolute path of `bin/atrium.js`, for clients that start the stdio server themselves. */
  atriumBin: string;
}

/** MCP client configurations (Claude Desktop, Cursor, …) for this platform, key filled in. */
export function mcpClientConfigs(gatewayUrl: string, apiKey: string, atriumBin: string) {
  return {
    stdio: {
      mcpServers: {
        atrium: {
          command: "node",
          args: [atriumBin, "mcp"],
          env: { ATRIUM_GATEWAY_URL: gatewayUrl, ATRIUM_API_KEY: apiKey },
        },
      },
    },
    http: {
      mcpServers: {
        atrium: { type: "http", url: `${gatewayUrl}/mcp`, headers: { "X-API-Key": apiKey } },
      },
    },
  };
}

const indented = (value: unknown) =>
  JSON.stringify(value, null, 2)
    .split("\n")
    .map((line) => `    ${line}`);

/** What `atrium start` prints last: where each service is and what a newcomer does next. */
export function startedBanner(running: RunningService[], options: BannerOptions): string {
  const memory = running.find((service) => service.name === "memory");
  const key = options.devGatewayKey;
  const configs = key && mcpClientConfigs(options.gatewayUrl, key, options.atriumBin);
  const scope = Object.entries(devMcpScope)
    .map(([field, value]) => `${field.replace(/_id$/, "")} ${value}`)
    .join(", ");
  return [
    "",
    "Atrium is running:",
    ...serviceLines(running),
    "",
    `  console       ${options.gatewayUrl}/console/ (operator key: GATEWAY_API_KEYS in ${options.devKeysPath})`,
    ...(configs
      ? [
          `  MCP           ${options.gatewayUrl}/mcp (X-API-Key: ${key}; scope: ${scope})`,
          "",
          "MCP client configuration, ready to paste (Claude Desktop: claude_desktop_config.json;",
          "Cursor: .cursor/mcp.json), stdio:",
          ...indented(configs.stdio),
          "  or Streamable HTTP:",
          ...indented(configs.http),
        ]
      : []),
    "",
    "Next:",
    "  walkthrough   README.md (Quick start), then docs/memory.md, docs/chat.md, docs/mcp.md",
    `  dev keys      ${options.devKeysPath} (the broker's X-API-Key is API_KEYS there)`,
    ...(memory ? [`  try it        curl -s ${memory.urls.rest}/api/v1/health`] : []),
    `  stop          Ctrl-C (data stays in ${options.dataDir}; delete it to start over)`,
    "",
  ].join("\n");
}

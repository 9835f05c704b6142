// Writes openapi/chat.openapi.json: the document the agent host serves at /openapi.json, which
// @fastify/swagger collects from the chat router's route schemas (run by scripts/gen.sh).
import { writeFileSync } from "node:fs";
import { chatOpenApiDocument } from "@atrium/chat";

const target = new URL("../../openapi/chat.openapi.json", import.meta.url);
writeFileSync(target, `${JSON.stringify(await chatOpenApiDocument(), null, 2)}\n`);

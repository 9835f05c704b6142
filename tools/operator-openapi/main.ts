// Writes openapi/memory.operator.openapi.json and openapi/gateway.operator.openapi.json: the
// documents @fastify/swagger collects from the operator routes' schemas (run by scripts/gen.sh).
import { writeFileSync } from "node:fs";
import { gatewayOperatorOpenApiDocument } from "@atrium/gateway";
import { memoryOperatorOpenApiDocument } from "@atrium/memory";

const documents = {
  "memory.operator": memoryOperatorOpenApiDocument,
  "gateway.operator": gatewayOperatorOpenApiDocument,
};
for (const [name, document] of Object.entries(documents)) {
  const target = new URL(`../../openapi/${name}.openapi.json`, import.meta.url);
  writeFileSync(target, `${JSON.stringify(await document(), null, 2)}\n`);
}

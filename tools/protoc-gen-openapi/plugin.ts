import { createEcmaScriptPlugin } from "@bufbuild/protoplugin";

// Placeholder generator replaced by the OpenAPI helper; emits nothing yet.
export const openapiPlugin = createEcmaScriptPlugin({
  name: "protoc-gen-openapi",
  version: "v0.1.0",
  generateTs() {},
});

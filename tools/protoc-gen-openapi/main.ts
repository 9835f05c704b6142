import { readFileSync } from "node:fs";
import { runNodeJs } from "@bufbuild/protoplugin";
import { createOpenApiPlugin } from "./plugin.js";

const version = readFileSync(new URL("../../VERSION", import.meta.url), "utf8").trim();
runNodeJs(createOpenApiPlugin({ version }));

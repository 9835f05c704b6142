import { runNodeJs } from "@bufbuild/protoplugin";
import { openapiPlugin } from "./plugin.js";

runNodeJs(openapiPlugin);

import type { AnyDesc, DescFile } from "@bufbuild/protobuf";
import { getComments } from "@bufbuild/protoplugin";

/** The leading comment of an element as an OpenAPI description, or undefined when there is none. */
export function descriptionOf(desc: Exclude<AnyDesc, DescFile>): string | undefined {
  const text = getComments(desc)
    .leading?.split("\n")
    // "// text" arrives as " text"; drop that one space, keep deeper indentation.
    .map((line) => line.replace(/^ /, "").trimEnd())
    .join("\n")
    .trim();
  return text === "" ? undefined : text;
}

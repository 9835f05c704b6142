// No source file of a package imports, even for types only, a file that imports it back: a
// circle means two files that cannot be read, tested or moved one without the other (the
// packages themselves depend on one another without circles, through their index.ts).
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import ts from "typescript";

const root = new URL("..", import.meta.url).pathname;

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts") && !name.endsWith(".test.ts")) {
      out.push(path);
    }
  }
  return out;
}

/** Each source file with the source files it imports by relative path. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const name of readdirSync(join(root, "packages"))) {
    const src = join(root, "packages", name, "src");
    if (!existsSync(src)) continue;
    for (const file of sources(src)) {
      const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
      graph.set(
        file,
        importedFiles
          .map((imported) => imported.fileName)
          .filter((specifier) => specifier.startsWith("."))
          .map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, ".ts")))
          .filter((target) => existsSync(target)),
      );
    }
  }
  return graph;
}

/** Each circle once, as the files along it. */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (file: string, path: string[]) => {
    state.set(file, "open");
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === "open") found.push([...path.slice(path.indexOf(target)), target]);
      else if (!state.has(target)) visit(target, [...path, target]);
    }
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file, [file]);
  return found;
}

test("the import graph holds the packages' relative imports", () => {
  const graph = importGraph();
  const server = join(root, "packages/kit/src/server");
  assert.ok(
    graph.get(join(server, "grpc-server.ts"))?.includes(join(server, "grpc-unary-handler.ts")),
  );
});

test("no source file imports one that imports it back", () => {
  const found = circles(importGraph()).map((circle) =>
    circle.map((file) => relative(root, file)).join(" -> "),
  );
  assert.deepEqual(found, []);
});

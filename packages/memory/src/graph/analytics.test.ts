import assert from "node:assert/strict";
import { test } from "node:test";
import { analyseGraph } from "./analytics.js";

test("two cliques joined through one node: two communities, the joint has bridge score 1", () => {
  const clique = (names: string[]) =>
    names.flatMap((a, i) => names.slice(i + 1).map((b) => ({ source: a, target: b, weight: 5 })));
  const nodes = ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4", "lonely"];
  const edges = [
    ...clique(["a1", "a2", "a3", "a4"]),
    ...clique(["b1", "b2", "b3", "b4"]),
    { source: "a1", target: "b1", weight: 1 },
  ];
  const result = analyseGraph(nodes, edges);
  const community = (n: string) => result.get(n)?.community;
  assert.equal(community("a2"), community("a4"));
  assert.equal(community("b2"), community("b4"));
  assert.notEqual(community("a2"), community("b2"));
  assert.equal(result.get("a1")?.bridgeScore, 1);
  assert.equal(result.get("b1")?.bridgeScore, 1);
  assert.equal(result.get("a3")?.bridgeScore, 0);
  assert.equal(result.get("lonely")?.bridgeScore, 0);
  assert.deepEqual(analyseGraph(nodes, edges), result, "deterministic");
});

test("a graph without edges: every node its own community", () => {
  const result = analyseGraph(["x", "y"], []);
  assert.notEqual(result.get("x")?.community, result.get("y")?.community);
});

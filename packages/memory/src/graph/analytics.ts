import { UndirectedGraph } from "graphology";
import louvainModule from "graphology-communities-louvain";

// The package is CommonJS (`module.exports = fn`) with ESM-style typings; under NodeNext the
// types describe the default import as the module object, at runtime it is the function.
const louvain = louvainModule as unknown as (typeof louvainModule)["default"];

export interface GraphEdgeInput {
  source: string;
  target: string;
  weight: number;
}

export interface NodeAnalytics {
  community: number;
  /** Distinct communities among the node's neighbours, other than the node's own. */
  bridgeScore: number;
}

/** Deterministic PRNG (mulberry32), so the same graph always gets the same communities. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Louvain communities (weighted) and bridge scores for one user's graph. */
export function analyseGraph(nodes: string[], edges: GraphEdgeInput[]): Map<string, NodeAnalytics> {
  const graph = new UndirectedGraph({ multi: false, allowSelfLoops: false });
  for (const node of nodes) graph.mergeNode(node);
  for (const { source, target, weight } of edges) {
    if (source === target || !graph.hasNode(source) || !graph.hasNode(target)) continue;
    // Relations in both directions, or several relations between one pair, add up.
    const key = graph.edge(source, target);
    if (key) graph.updateEdgeAttribute(key, "weight", (w: number) => w + weight);
    else graph.addEdge(source, target, { weight });
  }
  const communities =
    graph.size > 0
      ? louvain(graph, { getEdgeWeight: "weight", rng: seededRandom(42) })
      : Object.fromEntries(graph.nodes().map((n: string, i: number) => [n, i]));
  const out = new Map<string, NodeAnalytics>();
  for (const node of graph.nodes()) {
    const own = communities[node];
    const others = new Set<number>();
    for (const neighbour of graph.neighbors(node)) {
      if (communities[neighbour] !== own) others.add(communities[neighbour]);
    }
    out.set(node, { community: own, bridgeScore: others.size });
  }
  return out;
}

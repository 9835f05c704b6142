import { useMemo, useState } from "preact/hooks";
import { layoutGraph } from "./graph-layout";
import { type EntityFacts, type MemoryGraph, type MemoryOwner, memoryApi } from "./memory-api";
import { PageMessages } from "./page-messages";

const WIDTH = 800;
const HEIGHT = 520;
/** Categorical colours (Tableau 10) by community; grey until the graph was analysed. */
const PALETTE = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#bab0ac",
];
const UNANALYSED = "#9ca3af";

const colourOf = (community: number | null) =>
  community === null ? UNANALYSED : PALETTE[community % PALETTE.length];
const radiusOf = (mentions: number) => 6 + Math.min(10, 2 * Math.sqrt(mentions));

function Facts(props: { facts: EntityFacts }) {
  const { entity, facts } = props.facts;
  return (
    <aside class="entity-facts" aria-label="Entity facts">
      <h4>
        {entity.name} <span class="note">({entity.type})</span>
      </h4>
      <p class="note">
        Community {entity.community ?? "not analysed yet"} · bridges {entity.bridge_score ?? 0}{" "}
        other communities · mentioned in {entity.mentions} conversation
        {entity.mentions === 1 ? "" : "s"}
      </p>
      {facts.length === 0 ? (
        <p class="note">No relations.</p>
      ) : (
        <ul class="facts">
          {facts.map((f) => (
            <li key={`${f.direction}\0${f.relation}\0${f.other}`}>
              {f.direction === "out"
                ? `${entity.name} —${f.relation}→ ${f.other}`
                : `${f.other} —${f.relation}→ ${entity.name}`}
              <span class="note">
                {" "}
                confidence {f.confidence.toFixed(2)}, seen {f.weight}×
              </span>
            </li>
          ))}
        </ul>
      )}
    </aside>
  );
}

/**
 * The long-term graph as a drawing: a node per entity (sized by mentions, coloured by
 * community, ringed when it bridges communities), a line per relation; a click shows the
 * entity's facts.
 */
export function MemoryGraphView(props: { owner: MemoryOwner; graph: MemoryGraph }) {
  const { owner, graph } = props;
  const [facts, setFacts] = useState<EntityFacts | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const positions = useMemo(
    () =>
      layoutGraph(
        graph.nodes.map((n) => n.id),
        graph.edges,
        { width: WIDTH, height: HEIGHT, margin: 40 },
      ),
    [graph],
  );
  const communities = [
    ...new Set(graph.nodes.flatMap((n) => (n.community === null ? [] : [n.community]))),
  ].sort((a, b) => a - b);

  async function open(id: string) {
    setSelected(id);
    setError(undefined);
    try {
      setFacts(await memoryApi.entity(owner, id));
    } catch (failure) {
      setFacts(undefined);
      setError((failure as Error).message);
    }
  }

  if (graph.nodes.length === 0) {
    return <p class="note">No long-term memory yet: chains enter the graph once promoted.</p>;
  }
  return (
    <div class="graph-wrap">
      <svg
        class="graph"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`Knowledge graph: ${graph.nodes.length} entities, ${graph.edges.length} relations`}
      >
        {graph.edges.map((edge) => {
          const from = positions.get(edge.from);
          const to = positions.get(edge.to);
          if (!from || !to) return null;
          return (
            <line
              key={`${edge.from}\0${edge.relation}\0${edge.to}`}
              class="edge"
              x1={from.x}
              y1={from.y}
              x2={to.x}
              y2={to.y}
            >
              <title>{edge.relation}</title>
            </line>
          );
        })}
        {graph.nodes.map((node) => {
          const at = positions.get(node.id);
          if (!at) return null;
          const bridge = (node.bridge_score ?? 0) > 0;
          const r = radiusOf(node.mentions);
          return (
            // biome-ignore lint/a11y/useSemanticElements: an SVG group cannot be a <button>; it takes its role and keys.
            <g
              key={node.id}
              class={`node${bridge ? " bridge" : ""}${node.id === selected ? " selected" : ""}`}
              data-entity={node.id}
              transform={`translate(${at.x} ${at.y})`}
              role="button"
              tabIndex={0}
              aria-label={`${node.name}${bridge ? ", bridge" : ""}`}
              onClick={() => void open(node.id)}
              onKeyDown={(event) => {
                if (event.key === "Enter" || event.key === " ") {
                  event.preventDefault();
                  void open(node.id);
                }
              }}
            >
              <circle r={r} fill={colourOf(node.community)} />
              <text y={r + 12}>{node.name}</text>
            </g>
          );
        })}
      </svg>
      <ul class="legend" aria-label="Legend">
        {communities.map((c) => (
          <li key={c}>
            <svg width="12" height="12" aria-hidden="true">
              <rect width="12" height="12" fill={colourOf(c)} />
            </svg>{" "}
            community {c}
          </li>
        ))}
        <li>
          <svg width="14" height="14" aria-hidden="true">
            <circle cx="7" cy="7" r="5" fill={UNANALYSED} stroke="#111827" stroke-width="2" />
          </svg>{" "}
          ringed: bridges communities
        </li>
      </ul>
      <PageMessages error={error} />
      {facts && <Facts facts={facts} />}
      {!facts && !error && <p class="note">Click an entity to see its facts.</p>}
    </div>
  );
}

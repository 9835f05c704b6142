import {
  forceCollide,
  forceLink,
  forceManyBody,
  forceSimulation,
  forceX,
  forceY,
  type SimulationNodeDatum,
} from "d3-force";

export interface Point {
  x: number;
  y: number;
}

interface Body extends SimulationNodeDatum {
  id: string;
}

const TICKS = 300;

/**
 * Positions for a force-directed drawing inside `width` × `height` (less `margin`), computed at
 * once rather than animated: d3-force starts from a fixed spiral and jiggles with a seeded
 * generator, so one graph is always drawn the same way and the picture is final on first paint.
 */
export function layoutGraph(
  ids: string[],
  links: { from: string; to: string }[],
  size: { width: number; height: number; margin: number },
): Map<string, Point> {
  const bodies: Body[] = ids.map((id) => ({ id }));
  const known = new Set(ids);
  const simulation = forceSimulation(bodies)
    .force(
      "link",
      forceLink<Body, { source: string; target: string }>(
        links
          .filter((l) => known.has(l.from) && known.has(l.to))
          .map((l) => ({ source: l.from, target: l.to })),
      )
        .id((b) => b.id)
        .distance(60),
    )
    .force("charge", forceManyBody().strength(-120))
    .force("collide", forceCollide(18))
    // Pulls the pieces of a disconnected graph toward the middle instead of letting them drift.
    .force("x", forceX(0).strength(0.05))
    .force("y", forceY(0).strength(0.05))
    .stop();
  simulation.tick(TICKS);

  const xs = bodies.map((b) => b.x ?? 0);
  const ys = bodies.map((b) => b.y ?? 0);
  const [minX, maxX, minY, maxY] = [
    Math.min(...xs),
    Math.max(...xs),
    Math.min(...ys),
    Math.max(...ys),
  ];
  const innerW = size.width - 2 * size.margin;
  const innerH = size.height - 2 * size.margin;
  // One scale for both axes keeps the layout's proportions; a lone node sits in the middle.
  const scale = Math.min(innerW / (maxX - minX || 1), innerH / (maxY - minY || 1), 4);
  const offsetX = size.margin + (innerW - (maxX - minX) * scale) / 2;
  const offsetY = size.margin + (innerH - (maxY - minY) * scale) / 2;
  return new Map(
    bodies.map((b) => [
      b.id,
      { x: offsetX + ((b.x ?? 0) - minX) * scale, y: offsetY + ((b.y ?? 0) - minY) * scale },
    ]),
  );
}

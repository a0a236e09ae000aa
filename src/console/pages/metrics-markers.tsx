import { HEIGHT } from "../../metrics/chart";
import { MARKER_KINDS, MARKER_STYLE, type Marker, markerPath, markerTime } from "../../metrics/chart-markers";

/**
 * The Metrics tab's event markers (docs/metrics.md, "Console"): on each chart a thin vertical line
 * with a symbol per deploy, rollback, restart or crash (its SVG title names the event and time),
 * their legend entries, and the same events as a table under the charts.
 */

/** Symbols sit at the top of the plot, those of one step stacked downwards. */
const symbolY = (slot: number) => -4 + slot * 10;

export function ChartMarkers(props: { markers: Marker[] }) {
  return (
    <>
      {props.markers.map((m) => {
        const { color } = MARKER_STYLE[m.kind];
        return (
          <g class="chart-marker" data-marker={m.kind}>
            <title>{m.label}</title>
            <line x1={m.x} y1="0" x2={m.x} y2={HEIGHT} stroke={color} stroke-width="1" stroke-dasharray="3 2" />
            <path d={markerPath(m.kind, m.x, symbolY(m.slot))} fill={color} stroke={color} stroke-width="1.5" />
          </g>
        );
      })}
    </>
  );
}

/** A legend entry for each kind of event drawn. */
export function MarkerLegend(props: { markers: Marker[] }) {
  const kinds = MARKER_KINDS.filter((kind) => props.markers.some((m) => m.kind === kind));
  return (
    <>
      {kinds.map((kind) => (
        <span data-marker-legend={kind}>
          <svg width="10" height="10" viewBox="-5 -5 10 10" aria-hidden="true">
            <path d={markerPath(kind, 0, 0)} fill={MARKER_STYLE[kind].color} stroke={MARKER_STYLE[kind].color} stroke-width="1.5" />
          </svg>{" "}
          {MARKER_STYLE[kind].one}{" "}
        </span>
      ))}
    </>
  );
}

/** The events marked on the charts, as a table (the charts' alternative for them); the script swaps it with the charts. */
export function EventsTable(props: { markers: Marker[]; step: number }) {
  return (
    <section id="metric-events" aria-labelledby="metric-events-title">
      <h2 id="metric-events-title">Events in this range</h2>
      {props.markers.length === 0 ? (
        <p>No deploys, restarts or crashes in this range.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
            </tr>
          </thead>
          <tbody>
            {props.markers.map((m) => (
              <tr data-marker={m.kind}>
                <td>{markerTime(m.at, props.step)}</td>
                <td>{m.what}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

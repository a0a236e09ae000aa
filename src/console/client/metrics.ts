import { getFresh } from "./dom";

/**
 * The Metrics tab with script: the server-drawn charts are fetched again every 15 s (the page
 * itself, so what is drawn is the server's one drawing), and each chart shows the values of the
 * point under the pointer (or chosen with the arrow keys once the chart has focus) in a readout,
 * read from the chart's own table alternative.
 */

const SVG = "http://www.w3.org/2000/svg";

/** The chart's numbers as its table gives them: series names, then per point its time and values. */
function tableOf(section: HTMLElement): { names: string[]; rows: { label: string; values: string[] }[] } {
  const names = Array.from(section.querySelectorAll("thead th"), (th) => th.textContent ?? "").slice(1);
  const rows = Array.from(section.querySelectorAll("tbody tr"), (tr) => ({
    label: tr.querySelector("th")?.textContent ?? "",
    values: Array.from(tr.querySelectorAll("td"), (td) => td.textContent ?? ""),
  }));
  return { names, rows };
}

/** The drawing's size and point count, written by the server on the svg. */
function geometry(svg: SVGSVGElement) {
  return { width: Number(svg.dataset.width), points: Number(svg.dataset.points) };
}

/** The x (in the drawing) of the i-th of n points, as src/metrics/chart.ts places it. */
const xOf = (i: number, n: number, width: number) => (n <= 1 ? width / 2 : (i / (n - 1)) * width);

/** One chart's readout: which point it shows, drawn as a guide line and a line of text. */
function readoutFor(section: HTMLElement) {
  let index: number | null = null;
  const readout = document.createElement("p");
  readout.className = "chart-readout";
  readout.id = `${section.id}-readout`;
  readout.setAttribute("aria-live", "polite");
  readout.hidden = true;
  section.querySelector(".legend")?.before(readout);
  const svg = () => section.querySelector<SVGSVGElement>("svg[data-points]");
  const guide = () => {
    const drawing = svg()!;
    let line = drawing.querySelector<SVGLineElement>("line.chart-guide");
    if (!line) {
      line = document.createElementNS(SVG, "line");
      line.setAttribute("class", "chart-guide");
      line.setAttribute("y1", "0");
      line.setAttribute("y2", drawing.dataset.height ?? "0");
      drawing.append(line);
    }
    return line;
  };
  const show = (i: number | null) => {
    const drawing = svg();
    const { names, rows } = tableOf(section);
    const row = i === null ? undefined : rows[i];
    if (!drawing || i === null || !row) {
      index = null;
      readout.hidden = true;
      drawing?.querySelector("line.chart-guide")?.remove();
      return;
    }
    index = i;
    const { width, points } = geometry(drawing);
    const x = xOf(i, points, width);
    const line = guide();
    line.setAttribute("x1", String(x));
    line.setAttribute("x2", String(x));
    readout.textContent = `${row.label} UTC: ${names.map((name, k) => `${name} ${row.values[k] ?? "–"}`).join(", ")}`;
    readout.hidden = false;
    // Beside the guide line, kept inside the chart.
    const ctm = drawing.getScreenCTM();
    if (ctm) {
      const left = new DOMPoint(x, 0).matrixTransform(ctm).x - section.getBoundingClientRect().left;
      readout.style.left = `${Math.max(0, Math.min(left + 8, section.clientWidth - readout.offsetWidth))}px`;
    }
  };
  /** The point nearest the pointer's x. */
  const at = (clientX: number): number | null => {
    const drawing = svg();
    const ctm = drawing?.getScreenCTM();
    if (!drawing || !ctm) return null;
    const { width, points } = geometry(drawing);
    if (!(points > 0)) return null;
    const x = new DOMPoint(clientX, 0).matrixTransform(ctm.inverse()).x;
    return points === 1 ? 0 : Math.max(0, Math.min(points - 1, Math.round((x / width) * (points - 1))));
  };
  return { show, at, index: () => index, svg };
}

function followPointer(section: HTMLElement): { redrawn: () => void } {
  const chart = readoutFor(section);
  // Events are caught on the section: the svg is replaced at each refresh.
  section.addEventListener("pointermove", (event) => {
    if (event.target instanceof Element && event.target.closest("svg[data-points]")) chart.show(chart.at(event.clientX));
  });
  section.addEventListener("pointerleave", () => chart.show(null));
  section.addEventListener("focusout", () => chart.show(null));
  section.addEventListener("keydown", (event) => {
    const drawing = chart.svg();
    if (!drawing || event.target !== drawing) return;
    const last = geometry(drawing).points - 1;
    const now = chart.index();
    const moves: Record<string, number> = { ArrowLeft: (now ?? last + 1) - 1, ArrowRight: (now ?? -1) + 1, Home: 0, End: last };
    const next = moves[event.key];
    if (next === undefined) return;
    event.preventDefault();
    chart.show(Math.max(0, Math.min(last, next)));
  });
  const focusable = () => {
    const drawing = chart.svg();
    if (!drawing) return;
    drawing.setAttribute("tabindex", "0");
    drawing.setAttribute("aria-describedby", `${section.id}-readout`);
  };
  focusable();
  return {
    redrawn() {
      focusable();
      const shown = chart.index();
      if (shown !== null) chart.show(shown);
    },
  };
}

/** Swaps in the charts of a freshly fetched page: the drawing and the table, leaving open tables open; and the events table. */
function swapCharts(box: HTMLElement, html: string, charts: Map<string, { redrawn: () => void }>): void {
  const next = new DOMParser().parseFromString(html, "text/html").getElementById(box.id);
  if (!next) return;
  for (const [id, chart] of charts) {
    const section = document.getElementById(id);
    const fresh = next.querySelector(`#${id}`);
    if (!section || !fresh) continue;
    const hadFocus = section.querySelector("svg[data-points]") === document.activeElement;
    for (const part of ["svg[data-points]", ".legend", "table"]) {
      const old = section.querySelector(part);
      const replacement = fresh.querySelector(part);
      if (old && replacement) old.replaceWith(document.importNode(replacement, true));
    }
    chart.redrawn();
    if (hadFocus) section.querySelector<SVGSVGElement>("svg[data-points]")?.focus();
  }
  // The events marked on the charts, as a table.
  const events = document.getElementById("metric-events");
  const freshEvents = next.querySelector("#metric-events");
  if (events && freshEvents) events.replaceWith(document.importNode(freshEvents, true));
}

export function liveMetrics(): void {
  const box = document.querySelector<HTMLElement>("[data-metrics-refresh]");
  if (!box) return;
  const charts = new Map<string, { redrawn: () => void }>();
  box.querySelectorAll<HTMLElement>("section.metric-chart[id]").forEach((section) => charts.set(section.id, followPointer(section)));
  const every = Number(box.getAttribute("data-metrics-refresh")) * 1000 || 15_000;
  setInterval(() => {
    if (document.hidden) return;
    getFresh(location.pathname + location.search)
      .then((res) => res.text())
      .then((html) => swapCharts(box, html, charts), () => {});
  }, every);
}

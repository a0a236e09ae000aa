import { atEnd } from "./dom";

/** A line as the stream and the search route send it. */
interface LogLine {
  at: number;
  stream: "stdout" | "stderr";
  text: string;
}

/** Rows kept on the page; older ones are dropped as new ones come. */
const MAX_ROWS = 2000;

const pad = (n: number) => (n < 10 ? "0" : "") + n;

function format(line: LogLine): string {
  const d = new Date(line.at);
  const when = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${when}${line.stream === "stderr" ? " ! " : "   "}${line.text}\n`;
}

/** A datetime-local value read as UTC, in Unix milliseconds ("" for none). */
const asUtc = (value: string) => (value ? String(Date.parse(value.length === 16 ? `${value}:00Z` : `${value}Z`)) : "");

/** The lines shown in the log box, each once (from the stream or a gap fetch), at most MAX_ROWS. */
function logView(pre: HTMLElement) {
  let seen: string[] = [];
  let seenSet = new Set<string>();
  let lastAt = 0;
  const fresh = (line: LogLine) => {
    const key = `${line.at}|${line.stream}|${line.text}`;
    if (seenSet.has(key)) return false;
    seenSet.add(key);
    seen.push(key);
    if (seen.length > MAX_ROWS * 2) seenSet.delete(seen.shift()!);
    return true;
  };
  return {
    lastAt: () => lastAt,
    add(line: LogLine) {
      if (!fresh(line)) return;
      const follow = atEnd(pre);
      const row = document.createElement("span");
      row.className = line.stream === "stderr" ? "log-line log-stderr" : "log-line";
      row.textContent = format(line);
      pre.appendChild(row);
      while (pre.childNodes.length > MAX_ROWS) pre.removeChild(pre.firstChild!);
      if (line.at > lastAt) lastAt = line.at;
      if (follow) pre.scrollTop = pre.scrollHeight;
    },
    clear(resetTime: boolean) {
      pre.textContent = "";
      seen = [];
      seenSet = new Set();
      if (resetTime) lastAt = 0;
    },
  };
}

/** Lines from the JSON route (a search, or the gap since a time); rejects with its error sentence. */
async function fetchLines(src: string, params: Record<string, string>): Promise<{ lines: LogLine[] }> {
  const query = Object.entries(params)
    .filter(([, v]) => v !== "")
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
  const res = await fetch(src + (query ? `?${query}` : ""), { credentials: "same-origin", cache: "no-store" });
  const body = (await res.json()) as { lines: LogLine[]; error?: string };
  if (!res.ok) throw body.error || res.status;
  return body;
}

/** The live stream (SSE), resumed after the last event id it gave when opened again. */
function liveStream(src: string, view: ReturnType<typeof logView>, say: (text: string) => void) {
  let source: EventSource | null = null;
  let lastId = "";
  return {
    open(fresh: boolean) {
      source?.close();
      if (fresh) lastId = "";
      const current = new EventSource(src + (lastId ? `?last_event_id=${encodeURIComponent(lastId)}` : ""));
      source = current;
      current.onopen = () => say("Live.");
      current.onmessage = (event: MessageEvent<string>) => {
        if (event.lastEventId) lastId = event.lastEventId;
        view.add(JSON.parse(event.data) as LogLine);
      };
      current.onerror = () => say(current.readyState === EventSource.CLOSED ? "Disconnected." : "Reconnecting…");
    },
    close() {
      source?.close();
      source = null;
    },
    closed: () => !source || source.readyState === EventSource.CLOSED,
  };
}

/**
 * The app's Logs: the runtime output live over SSE (EventSource resumes with the last event id by
 * itself), the gap fetched from the JSON route when the tab is shown again, and the search form
 * answered from the JSON route without reloading the page.
 */
export function liveLogs(): void {
  const box = document.getElementById("logs");
  const pre = document.getElementById("live-logs");
  if (!box || !pre || !window.EventSource || !window.fetch) return;
  const status = document.getElementById("logs-status");
  const form = document.getElementById("logs-search") as HTMLFormElement | null;
  const back = box.querySelector<HTMLElement>("[data-logs-live]");
  const searchSrc = box.getAttribute("data-logs-search")!;
  const view = logView(pre);
  const say = (text: string) => {
    if (status) status.textContent = text;
  };
  const stream = liveStream(box.getAttribute("data-logs-stream")!, view, say);
  const searching = (on: boolean) => box.setAttribute("data-searching", on ? "true" : "false");
  // Back from a hidden tab (the browser may have throttled or dropped the stream): fetch what
  // was printed meanwhile, then make sure the stream is open again.
  const catchUp = () => {
    if (box.getAttribute("data-searching") === "true" || document.hidden) return;
    const since = view.lastAt();
    fetchLines(searchSrc, { since: since ? String(since) : "", limit: "1000" })
      .then((body) => body.lines.forEach(view.add), () => {})
      .then(() => {
        if (stream.closed()) stream.open(false);
      });
  };
  const live = () => {
    searching(false);
    if (back) back.hidden = true;
    view.clear(true);
    say("Connecting…");
    stream.open(true);
  };
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const [q, since, until] = ["q", "since", "until"].map((name) => String(data.get(name) ?? ""));
    if (!q && !since && !until) return live();
    stream.close();
    searching(true);
    say("Searching…");
    fetchLines(searchSrc, { q: q!, since: asUtc(since!), until: asUtc(until!), limit: "1000" }).then(
      (body) => {
        view.clear(false);
        body.lines.forEach(view.add);
        say(`${body.lines.length}${body.lines.length === 1 ? " line" : " lines"} found.`);
        if (back) back.hidden = false;
      },
      (error: unknown) => say(String(error)),
    );
  });
  back?.addEventListener("click", (event) => {
    event.preventDefault();
    form?.querySelectorAll("input").forEach((input) => {
      input.value = "";
    });
    live();
  });
  document.addEventListener("visibilitychange", catchUp);
  if (box.getAttribute("data-searching") !== "true") live();
}

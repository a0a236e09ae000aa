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
  const streamSrc = box.getAttribute("data-logs-stream")!;
  const searchSrc = box.getAttribute("data-logs-search")!;
  const view = logView(pre);
  let source: EventSource | null = null;
  let lastId = "";
  let searching = box.getAttribute("data-searching") === "true";
  const say = (text: string) => {
    if (status) status.textContent = text;
  };
  const open = () => {
    source?.close();
    const current = new EventSource(streamSrc + (lastId ? `?last_event_id=${encodeURIComponent(lastId)}` : ""));
    source = current;
    current.onopen = () => say("Live.");
    current.onmessage = (event: MessageEvent<string>) => {
      if (event.lastEventId) lastId = event.lastEventId;
      view.add(JSON.parse(event.data) as LogLine);
    };
    current.onerror = () => say(current.readyState === EventSource.CLOSED ? "Disconnected." : "Reconnecting…");
  };
  const get = async (params: Record<string, string>): Promise<{ lines: LogLine[] }> => {
    const query = Object.entries(params)
      .filter(([, v]) => v !== "")
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join("&");
    const res = await fetch(searchSrc + (query ? `?${query}` : ""), { credentials: "same-origin", cache: "no-store" });
    const body = (await res.json()) as { lines: LogLine[]; error?: string };
    if (!res.ok) throw body.error || res.status;
    return body;
  };
  // Back from a hidden tab (the browser may have throttled or dropped the stream): fetch what
  // was printed meanwhile, then make sure the stream is open again.
  const catchUp = () => {
    if (searching || document.hidden) return;
    const since = view.lastAt();
    get({ since: since ? String(since) : "", limit: "1000" })
      .then((body) => body.lines.forEach(view.add), () => {})
      .then(() => {
        if (!source || source.readyState === EventSource.CLOSED) open();
      });
  };
  const live = () => {
    searching = false;
    box.setAttribute("data-searching", "false");
    if (back) back.hidden = true;
    view.clear(true);
    lastId = "";
    say("Connecting…");
    open();
  };
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const q = String(data.get("q") ?? "");
    const since = String(data.get("since") ?? "");
    const until = String(data.get("until") ?? "");
    if (!q && !since && !until) return live();
    source?.close();
    source = null;
    searching = true;
    box.setAttribute("data-searching", "true");
    say("Searching…");
    get({ q, since: asUtc(since), until: asUtc(until), limit: "1000" }).then(
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
  if (!searching) live();
}

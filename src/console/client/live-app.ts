import { atEnd, getFresh, hideAll, localDates, parseElement } from "./dom";

/** What the console script reads of the app's JSON route. */
interface AppJson {
  status: string;
  deploy_in_progress: boolean;
  latest_deploy: { id: string; status: string } | null;
}

const stateOf = (app: AppJson) => `${app.latest_deploy ? `${app.latest_deploy.id}:${app.latest_deploy.status}` : "none"}:${app.status}`;

/**
 * A deploy's log as it is written, line by line over SSE (resumed by the browser with the last
 * event id); the lines received so far are the log shown, also after a redraw of the page. Null
 * when the page has no log to follow this way.
 */
function streamedLog(logSrc: string | null): { show: () => void } | null {
  if (!logSrc || !window.EventSource || !document.getElementById("deploy-log")) return null;
  const lines: string[] = [];
  let scheduled = false;
  const show = () => {
    scheduled = false;
    const pre = document.getElementById("deploy-log");
    if (!pre || lines.length === 0) return;
    const follow = atEnd(pre);
    pre.textContent = `${lines.join("\n")}\n`;
    if (follow) pre.scrollTop = pre.scrollHeight;
  };
  const source = new EventSource(`${logSrc}/stream`);
  source.onmessage = (event: MessageEvent<string>) => {
    lines.push((JSON.parse(event.data) as { text: string }).text);
    if (!scheduled) {
      scheduled = true;
      setTimeout(show, 100);
    }
  };
  source.addEventListener("end", () => source.close());
  return { show };
}

/**
 * Draws the page's live part again from the page as the server has it now, keeping focus where it
 * was, and announces the end of the deploy.
 */
async function redrawLive(box: HTMLElement, announce: Element | null, streamed: { show: () => void } | null, hideRefresh: () => void) {
  const html = await (await getFresh(location.pathname)).text();
  const next = parseElement(html, "app-live");
  if (!next) return;
  const active = document.activeElement;
  const focused = active && box.contains(active) ? active.id : "";
  box.innerHTML = next.innerHTML;
  for (const name of ["data-app-state", "data-deploying"]) box.setAttribute(name, next.getAttribute(name) ?? "");
  localDates(box);
  streamed?.show();
  const pre = document.getElementById("deploy-log");
  if (pre) pre.scrollTop = pre.scrollHeight;
  if (focused) document.getElementById(focused)?.focus();
  // The page read may be newer than the JSON that asked for it (the deploy ended in between):
  // what the redrawn page shows decides, or its end would never be announced.
  const deploying = next.getAttribute("data-deploying") === "true";
  if (deploying) hideRefresh();
  if (!deploying && announce) {
    const failed = /:failed:/.test(next.getAttribute("data-app-state") ?? "");
    announce.textContent = failed ? "The deploy failed." : "The deploy is live.";
  }
}

/**
 * An app page or deploy log while a deploy runs: poll the app's JSON route (and the log's), and
 * redraw the page's live part (#app-live) once the deploy's state changes.
 */
export function liveApp(): void {
  const box = document.getElementById("app-live");
  if (!box || !box.hasAttribute("data-app-src") || box.getAttribute("data-deploying") !== "true") return;
  const appSrc = box.getAttribute("data-app-src")!;
  const logSrc = box.getAttribute("data-log-src");
  const announce = document.querySelector("[data-app-announce]");
  const streamed = streamedLog(logSrc);
  const hideRefresh = () => hideAll(box, "[data-refresh-link]");

  const followLog = async () => {
    if (!logSrc || streamed) return;
    const text = await (await getFresh(logSrc)).text();
    const pre = document.getElementById("deploy-log");
    if (!pre || !text) return;
    const follow = atEnd(pre);
    pre.textContent = text;
    if (follow) pre.scrollTop = pre.scrollHeight;
  };

  const redraw = () => redrawLive(box, announce, streamed, hideRefresh);

  let delay = 1000;
  const later = () => {
    delay = Math.min(delay * 1.2, 5000);
    setTimeout(tick, delay);
  };
  const tick = () => {
    getFresh(appSrc)
      .then((res) => res.json() as Promise<AppJson>)
      .then(async (app) => {
        await followLog();
        if (stateOf(app) !== box.getAttribute("data-app-state")) await redraw();
        return app;
      })
      .then((app) => {
        if (app.deploy_in_progress) later();
        else hideRefresh();
      }, later);
  };
  hideRefresh();
  setTimeout(tick, delay);
}

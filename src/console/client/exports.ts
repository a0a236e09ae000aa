import { getFresh, hideAll, localDates } from "./dom";

/**
 * A database page while an export runs: the exports list is fetched again (quickly at first, then
 * backing off, so a page left open on a slow export stays cheap) until none is pending or running.
 */
export function liveExports(): void {
  const box = document.querySelector<HTMLElement>("[data-live-src]");
  if (!box) return;
  const src = box.getAttribute("data-live-src")!;
  const announce = document.querySelector("[data-live-announce]");
  const inProgress = () => box.querySelector("[data-status=pending], [data-status=running]") !== null;
  let delay = 1000;
  const later = () => {
    delay = Math.min(delay * 1.5, 15000);
    setTimeout(tick, delay);
  };
  const tick = () => {
    if (!inProgress()) return;
    getFresh(src)
      .then((res) => res.text())
      .then((html) => {
        const next = new DOMParser().parseFromString(html, "text/html").querySelector("[data-live-src]");
        if (next) {
          box.innerHTML = next.innerHTML;
          localDates(box);
          hideAll(box, "[data-refresh-link]");
          if (!inProgress() && announce) announce.textContent = "The export is ready.";
        }
        later();
      }, later);
  };
  hideAll(box, "[data-refresh-link]");
  setTimeout(tick, delay);
}

import { copyButtons } from "./copy";
import { getFresh, hideAll, localDates, parseElement } from "./dom";

const left = (ms: number) => {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return s >= 60 ? `in ${Math.floor(s / 60)} min ${s % 60} s` : `in ${s} s`;
};

/** Each domain's badge by hostname. */
function badges(box: HTMLElement): Record<string, string> {
  const seen: Record<string, string> = {};
  box.querySelectorAll("[data-domain]").forEach((item) => {
    const badge = item.querySelector("[data-domain-status]");
    if (badge) seen[item.getAttribute("data-domain")!] = badge.getAttribute("data-domain-status") ?? "";
  });
  return seen;
}

/** Badge changes are said once through the page's status line (the countdowns are not). */
function announce(before: Record<string, string>, after: Record<string, string>): void {
  const status = document.querySelector("[data-domains-announce]");
  const changed = Object.keys(after).filter((name) => before[name] && before[name] !== after[name]);
  if (status && changed.length > 0) status.textContent = changed.map((name) => `${name}: ${after[name]}`).join(". ");
}

/**
 * The Custom domains section: a countdown to each domain's next check; once one is due, the
 * section is fetched again (every 2 s until the check has run) and redrawn, keeping the text
 * typed in the add form.
 */
export function liveDomains(): void {
  const box = document.getElementById("domains");
  if (!box) return;
  const hideRefresh = () => hideAll(box, "[data-domains-refresh]");
  let lastRefresh = 0;
  let refreshing = false;
  const redraw = () => {
    refreshing = true;
    lastRefresh = Date.now();
    getFresh(location.pathname)
      .then((res) => res.text())
      .then((html) => {
        const next = parseElement(html, "domains");
        if (!next) return;
        const input = document.getElementById("f-hostname") as HTMLInputElement | null;
        const typed = input ? input.value : "";
        const focused = input !== null && document.activeElement === input;
        const before = badges(box);
        box.innerHTML = next.innerHTML;
        announce(before, badges(box));
        const fresh = document.getElementById("f-hostname") as HTMLInputElement | null;
        if (fresh) {
          fresh.value = typed;
          if (focused) fresh.focus();
        }
        localDates(box);
        copyButtons(box);
        hideRefresh();
        tick();
      })
      .then(
        () => {
          refreshing = false;
        },
        () => {
          refreshing = false;
        },
      );
  };
  const tick = () => {
    let due = false;
    box.querySelectorAll("[data-countdown]").forEach((el) => {
      const ms = Date.parse(el.getAttribute("data-countdown") ?? "") - Date.now();
      if (ms <= 0) {
        el.textContent = "checking now";
        due = true;
      } else el.textContent = left(ms);
    });
    if (due && !refreshing && Date.now() - lastRefresh >= 2000) redraw();
  };
  hideRefresh();
  tick();
  setInterval(tick, 1000);
}

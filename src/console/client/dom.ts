/** Small DOM helpers shared by the console script's parts. */

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/** Dates written by the server in UTC, shown in the browser's own time zone and locale. */
export function localDates(root: ParentNode): void {
  root.querySelectorAll<HTMLTimeElement>("time[data-local]").forEach((el) => {
    const date = new Date(el.getAttribute("datetime") ?? "");
    if (!Number.isNaN(date.getTime())) el.textContent = dateFormat.format(date);
  });
}

/** Hides the Refresh links (matching `selector`) that only a page without script needs. */
export function hideAll(root: ParentNode, selector: string): void {
  root.querySelectorAll<HTMLElement>(selector).forEach((link) => {
    link.hidden = true;
  });
}

/** A same-origin GET that is never answered from the cache; a status other than 2xx rejects. */
export async function getFresh(url: string): Promise<Response> {
  const res = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  if (!res.ok) throw res.status;
  return res;
}

/** The element with `id` in a page fetched as HTML, or null. */
export function parseElement(html: string, id: string): HTMLElement | null {
  return new DOMParser().parseFromString(html, "text/html").getElementById(id);
}

/** Whether a scrolled box is at (or within a few pixels of) its end, so it should follow new lines. */
export function atEnd(box: HTMLElement): boolean {
  return box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
}

/**
 * Pure formatting rules of the console: sizes, dates, waits and safe redirect targets.
 * No I/O; the locale and the clock come in as arguments.
 */

const SIZE_UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB"] as const;

/** A byte count for people: `0 B`, `999 B`, `1.5 KiB`, `12 MiB` (binary units, 1 decimal below 10). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "unknown size";
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  let value = bytes / 1024;
  let unit = 0;
  for (;;) {
    const tenths = Math.round(value * 10) / 10;
    const shown = tenths < 10 ? tenths.toFixed(1) : String(Math.round(value));
    if (Math.round(value) < 1024 || unit === SIZE_UNITS.length - 1) return `${shown} ${SIZE_UNITS[unit]}`;
    value /= 1024;
    unit++;
  }
}

/** The exact instant for a hover title: `2026-11-21 09:05:03 UTC`. */
export function formatUtcExact(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/**
 * A date and time in the given locale, shown in UTC (the server does not know the viewer's
 * time zone; the console script rewrites it into local time when it runs).
 */
export function formatDateTime(iso: string, locale: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const text = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" }).format(date);
  // ICU versions differ on (narrow) no-break spaces; plain ones read the same and stay stable.
  return `${text.replace(/[\u00a0\u202f]/g, " ")} UTC`;
}

/** Used when the browser names no language we can format in. */
export const FALLBACK_LOCALE = "en-GB";

/**
 * The viewer's preferred locale from `Accept-Language` (highest q first, `*` and q=0 skipped),
 * limited to locales the runtime can format; FALLBACK_LOCALE when none fits.
 */
export function pickLocale(acceptLanguage: string | undefined): string {
  if (!acceptLanguage) return FALLBACK_LOCALE;
  const ranked = acceptLanguage
    .split(",")
    .map((part, order) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), order };
    })
    .filter((r) => r.tag !== "" && r.tag !== "*" && r.q > 0 && /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/.test(r.tag))
    .sort((a, b) => b.q - a.q || a.order - b.order);
  for (const { tag } of ranked) {
    try {
      const [supported] = Intl.DateTimeFormat.supportedLocalesOf(tag);
      if (supported) return supported;
    } catch {
      // a tag Intl rejects is skipped like an unknown one
    }
  }
  return FALLBACK_LOCALE;
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;

/** A wait in words, to the second below an hour: `1 second`, `4 minutes 10 seconds`, `1 hour 5 minutes`. */
export function describeWait(totalSeconds: number): string {
  const s = Math.max(1, Math.ceil(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  if (hours > 0) return minutes > 0 ? `${plural(hours, "hour")} ${plural(minutes, "minute")}` : plural(hours, "hour");
  if (minutes > 0) return seconds > 0 ? `${plural(minutes, "minute")} ${plural(seconds, "second")}` : plural(minutes, "minute");
  return plural(seconds, "second");
}

/** Where the console lands after sign-in when no safe target is given. */
export const HOME_PATH = "/console/databases";

/**
 * A post-sign-in target from a query parameter: only a path inside the console, never another
 * host (`//evil`, `/\evil`, `https://...`), else HOME_PATH.
 */
export function safeNext(raw: string | undefined | null): string {
  if (!raw || raw.length > 512) return HOME_PATH;
  if (!/^\/console(\/|$|\?)/.test(raw)) return HOME_PATH;
  if (/[\\\s]/.test(raw) || raw.includes("//")) return HOME_PATH;
  return raw;
}

/** A long hex digest shortened for a table cell: first 12 characters and an ellipsis. */
export function shortDigest(hex: string): string {
  return hex.length > 16 ? `${hex.slice(0, 12)}…` : hex;
}

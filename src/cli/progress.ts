/**
 * What the client tells a person on stderr: phase lines while it waits ("export pending,
 * retrying in 2 s") and, on a terminal, a progress bar with bytes, rate and ETA. stdout is left
 * to the summary, so a piped run prints nothing else there.
 */

/** Where progress and phase lines go. */
export interface Reporter {
  /** One line about what the client is doing or waiting for. */
  phase(message: string): void;
  /** Bytes of the archive saved so far, of `total` when the size is known. */
  progress(saved: number, total: number | undefined): void;
  /** Clears the progress bar, before the summary or an error is printed. */
  finish(): void;
}

/** A writable text stream; `isTTY` and `columns` as on `process.stderr`. */
export interface TextStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** A terminal redraw this often is smooth enough and keeps a fast download cheap. */
const REDRAW_MS = 100;
const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** `1536` -> `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** `65` -> `1m05s`; `7` -> `7s`. */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const minutes = Math.floor(whole / 60);
  return minutes === 0 ? `${whole}s` : `${minutes}m${String(whole % 60).padStart(2, "0")}s`;
}

/** One progress line: bar and percentage when the size is known, then bytes, rate and ETA. */
export function renderProgress(saved: number, total: number | undefined, bytesPerSecond: number, width = 24): string {
  const rate = `${formatBytes(Math.round(bytesPerSecond))}/s`;
  if (total === undefined || total <= 0) return `${formatBytes(saved)}  ${rate}`;
  const fraction = Math.min(1, saved / total);
  const filled = Math.round(fraction * width);
  const eta = bytesPerSecond > 0 ? formatDuration((total - saved) / bytesPerSecond) : "?";
  const bar = "#".repeat(filled) + "-".repeat(width - filled);
  return `[${bar}] ${String(Math.floor(fraction * 100)).padStart(3)}%  ${formatBytes(saved)} / ${formatBytes(total)}  ${rate}  ETA ${eta}`;
}

/** A reporter for `stream`: silent with `quiet`, a progress bar only on a terminal. */
export function createReporter(stream: TextStream, quiet: boolean, now: () => number = Date.now): Reporter {
  if (quiet) return { phase() {}, progress() {}, finish() {} };
  const terminal = stream.isTTY === true;
  let barShown = false;
  let lastDraw = 0;
  let first: { at: number; saved: number } | undefined;
  const clear = () => {
    if (barShown) stream.write("\r\x1b[2K");
    barShown = false;
  };
  return {
    phase(message) {
      clear();
      stream.write(`${message}\n`);
    },
    progress(saved, total) {
      if (!terminal) return;
      const at = now();
      first ??= { at, saved };
      if (at - lastDraw < REDRAW_MS && saved !== total) return;
      lastDraw = at;
      const seconds = (at - first.at) / 1000;
      const rate = seconds > 0 ? (saved - first.saved) / seconds : 0;
      const line = renderProgress(saved, total, rate);
      // A pseudo-terminal without a size reports 0 columns.
      const columns = stream.columns && stream.columns > 0 ? stream.columns : 80;
      stream.write(`\r\x1b[2K${line.slice(0, columns - 1)}`);
      barShown = true;
    },
    finish: clear,
  };
}

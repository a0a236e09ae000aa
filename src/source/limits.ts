/**
 * What a deploy's source may cost the engine: the unpacked size and the number of entries of a
 * repository archive, and how long it may take to arrive. Pure rules with the sentences the red
 * panel shows; the tar reader (context.ts) and the fetch (fetch.ts) apply them.
 */

export interface SourceCaps {
  /** SOURCE_MAX_BYTES: bytes of the archive once unpacked (the tar stream, headers included). */
  maxBytes: number;
  /** SOURCE_MAX_ENTRIES: files, folders and links in the archive. */
  maxEntries: number;
}

/** What has passed through so far. */
export interface SourceTally {
  bytes: number;
  entries: number;
}

/** The red-panel sentence once a tally passes a cap, else null. At the cap exactly is still fine. */
export function sourceCapRefusal(tally: SourceTally, caps: SourceCaps): string | null {
  if (tally.bytes > caps.maxBytes) {
    return `The repository is larger than ${formatBytes(caps.maxBytes)} unpacked, the most a deploy takes (SOURCE_MAX_BYTES). Remove large files from the branch, or ask the operator to raise the limit.`;
  }
  if (tally.entries > caps.maxEntries) {
    return `The repository holds more than ${caps.maxEntries.toLocaleString("en-US")} files and folders, the most a deploy takes (SOURCE_MAX_ENTRIES). Remove files from the branch, or ask the operator to raise the limit.`;
  }
  return null;
}

/** The red-panel sentence for a source that did not arrive in time. */
export function sourceTimeoutMessage(repository: string, seconds: number): string {
  return `The repository ${repository} did not arrive within ${formatSeconds(seconds)}, the most a deploy waits for its source (SOURCE_TIMEOUT_SECONDS). Try again, or make the repository smaller.`;
}

/** The red-panel sentence for a build stopped at its deadline. */
export function buildTimeoutMessage(seconds: number): string {
  return `The build was stopped after ${formatSeconds(seconds)}, the most a build may take (BUILD_TIMEOUT_SECONDS). Make the build faster, or ask the operator to raise the limit.`;
}

/** Bytes in the largest binary unit that divides them, else in bytes: `1 GiB`, `10 MiB`, `1500 bytes`. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) {
    if (bytes >= size && bytes % size === 0) return `${(bytes / size).toLocaleString("en-US")} ${unit}`;
  }
  return `${bytes.toLocaleString("en-US")} bytes`;
}

/** `45 s`, `15 min`, `1 h 30 min`: whole minutes and hours where the number allows. */
export function formatSeconds(seconds: number): string {
  if (seconds < 60 || seconds % 60 !== 0) return `${seconds} s`;
  const minutes = seconds / 60;
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ""}`;
}

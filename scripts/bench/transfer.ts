/** Whole-file downloads with curl, timed by curl itself. */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";

/** One finished download. */
export interface Download {
  status: number;
  bytes: number;
  seconds: number;
  /** `X-Export-SHA256` of the reply, when asked for headers. */
  sha256?: string;
}

/**
 * Fetches `url` whole with curl (failing on an HTTP error) into `output` (default: discarded).
 * The time is curl's own `time_total`, from the start of the request to the last byte.
 */
export async function curlDownload(url: string, output = "/dev/null"): Promise<Download> {
  const { stdout } = await promisify(execFile)("curl", [
    "-sS", "--fail", "-o", output, "-D", "-",
    "-w", "\n%{http_code} %{size_download} %{time_total}",
    url,
  ], { maxBuffer: 1024 * 1024 });
  const lines = stdout.trimEnd().split("\n");
  const [status, bytes, seconds] = lines.at(-1)!.split(" ").map(Number) as [number, number, number];
  const sha256 = lines.find((l) => /^x-export-sha256:/i.test(l))?.split(":")[1]?.trim();
  return { status, bytes, seconds, ...(sha256 ? { sha256 } : {}) };
}

/** MB (10^6 bytes) per second. */
export function mbPerSecond(bytes: number, seconds: number): number {
  return bytes / 1e6 / seconds;
}

/** SHA-256 of a file, lowercase hex. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(path), hash);
  return hash.digest("hex");
}

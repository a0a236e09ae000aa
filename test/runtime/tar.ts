/**
 * A tiny ustar writer for build contexts in tests (no dependency; runs in Node and workerd).
 * Regular files, directories and symlinks; names up to 255 bytes via the ustar prefix field.
 */

export interface TarEntry {
  /** Path inside the archive, `/`-separated, no leading slash (e.g. `www/cgi-bin/env`). */
  name: string;
  type?: "file" | "dir" | "symlink";
  /** File contents; strings are written as UTF-8. */
  data?: Uint8Array | string;
  /** Permission bits; default 0o644 for files, 0o755 for directories. */
  mode?: number;
  /** Target of a symlink. */
  linkname?: string;
}

const BLOCK = 512;
const encoder = new TextEncoder();

/** The whole archive, ending with the two zero blocks tar readers expect. */
export function tarArchive(entries: TarEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    const data = entry.type === "file" || entry.type === undefined ? toBytes(entry.data ?? "") : new Uint8Array();
    parts.push(header(entry, data.length), data, new Uint8Array(padding(data.length)));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** The archive as a stream in several chunks, as a build context arrives from a real source. */
export function tarStream(entries: TarEntry[], chunkSize = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = tarArchive(entries);
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}

function header(entry: TarEntry, size: number): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const type = entry.type ?? "file";
  const [prefix, name] = splitName(type === "dir" && !entry.name.endsWith("/") ? `${entry.name}/` : entry.name);
  writeString(block, 0, 100, name);
  writeOctal(block, 100, 8, entry.mode ?? (type === "dir" ? 0o755 : 0o644));
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, 0);
  block.fill(0x20, 148, 156); // The checksum is computed with its own field as spaces.
  block[156] = (type === "dir" ? "5" : type === "symlink" ? "2" : "0").charCodeAt(0);
  writeString(block, 157, 100, entry.linkname ?? "");
  writeString(block, 257, 6, "ustar");
  writeString(block, 263, 2, "00");
  writeString(block, 345, 155, prefix);
  const sum = block.reduce((n, b) => n + b, 0);
  writeString(block, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

/** ustar keeps up to 100 bytes in `name` and a directory part of up to 155 in `prefix`. */
function splitName(path: string): [string, string] {
  if (encoder.encode(path).length <= 100) return ["", path];
  const cut = path.lastIndexOf("/", path.length - 2);
  const prefix = path.slice(0, cut);
  const name = path.slice(cut + 1);
  if (cut < 0 || encoder.encode(prefix).length > 155 || encoder.encode(name).length > 100) {
    throw new Error(`Path too long for ustar: ${path}`);
  }
  return [prefix, name];
}

function writeString(block: Uint8Array, offset: number, length: number, value: string): void {
  block.set(encoder.encode(value).subarray(0, length), offset);
}

function writeOctal(block: Uint8Array, offset: number, length: number, value: number): void {
  writeString(block, offset, length, `${value.toString(8).padStart(length - 1, "0")}\0`);
}

function padding(size: number): number {
  return (BLOCK - (size % BLOCK)) % BLOCK;
}

function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}

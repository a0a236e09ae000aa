/**
 * The small state file per database: the link of the export this client started, kept until it
 * expires or its archive is saved, so a later run told `export_in_flight` polls that link
 * (docs/api.md, export rule 3). The link authorises the download, so files are private (0600).
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A started export's link, as the start reply gave it. */
export interface StoredLink {
  url: string;
  expiresAt: string;
}

/** A link this close to expiry is not worth polling: it would answer 401 SIGNED_URL_EXPIRED. */
export const EXPIRY_MARGIN_MS = 5_000;

/** Where state lives: EXPORT_STATE_DIR, else `$XDG_STATE_HOME/dbexport`, else `~/.local/state/dbexport`. */
export function stateDirectory(env: Record<string, string | undefined>, home: string): string {
  if (env.EXPORT_STATE_DIR) return env.EXPORT_STATE_DIR;
  return join(env.XDG_STATE_HOME || join(home, ".local", "state"), "dbexport");
}

/** A stored link is used only on the server it came from and only while it is still valid. */
export function isUsableLink(link: StoredLink, baseUrl: string, nowMs: number): boolean {
  const expires = Date.parse(link.expiresAt);
  if (Number.isNaN(expires) || expires - nowMs <= EXPIRY_MARGIN_MS) return false;
  try {
    return new URL(link.url).origin === new URL(baseUrl).origin;
  } catch {
    return false;
  }
}

/** Reads and writes one JSON file per database in `directory`. */
export class LinkStore {
  constructor(
    private readonly directory: string,
    private readonly now: () => number = Date.now,
  ) {}

  private path(databaseId: string): string {
    return join(this.directory, `${databaseId}.json`);
  }

  /** The usable link stored for the database on this server; an expired one is removed. */
  load(databaseId: string, baseUrl: string): StoredLink | undefined {
    let link: StoredLink;
    try {
      const raw = JSON.parse(readFileSync(this.path(databaseId), "utf8")) as { url?: unknown; expires_at?: unknown };
      if (typeof raw.url !== "string" || typeof raw.expires_at !== "string") return undefined;
      link = { url: raw.url, expiresAt: raw.expires_at };
    } catch {
      return undefined;
    }
    if (isUsableLink(link, baseUrl, this.now())) return link;
    if (Date.parse(link.expiresAt) <= this.now()) this.forget(databaseId);
    return undefined;
  }

  /** Stores the link of an export just started, replacing any earlier one. */
  save(databaseId: string, link: StoredLink): void {
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    const target = this.path(databaseId);
    const temporary = `${target}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ url: link.url, expires_at: link.expiresAt }) + "\n", { mode: 0o600 });
    renameSync(temporary, target);
  }

  /** Drops the link once its archive is saved or the link can no longer succeed. */
  forget(databaseId: string): void {
    rmSync(this.path(databaseId), { force: true });
  }
}

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/cli/args";
import { ExitCode } from "../../src/cli/exit-codes";
import { exportIdOf, fallbackFilename, filenameFromDisposition, parseContentRange, readSha256 } from "../../src/cli/headers";
import { formatSummary } from "../../src/cli/main";
import { createReporter, formatBytes, formatDuration, renderProgress } from "../../src/cli/progress";
import { LinkStore, isUsableLink, stateDirectory } from "../../src/cli/state";

// The client's small pure pieces: headers, the state file, the command line, progress output.

const DB = "0b8f1a4e-3c2d-4e5f-8a9b-0c1d2e3f4a5b";
const EID = "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9";
const LINK = `https://api.example.com/api/v1/dbs/${DB}/exports/${EID}/download?exp=1900000000&sig=abc`;
const NOW = Date.parse("2026-11-21T12:00:00Z");

describe("download headers", () => {
  it.each([
    ["bytes 100-199/1000", { start: 100, end: 199, total: 1000 }],
    ["bytes */1000", { total: 1000 }],
    ["bytes 0-9/*", { start: 0, end: 9 }],
    ["items 0-9/10", undefined],
    [null, undefined],
  ])("Content-Range %s", (header, expected) => {
    expect(parseContentRange(header)).toEqual(expected);
  });

  it.each([
    [`attachment; filename="${DB}-${EID}.sql.gz"`, `${DB}-${EID}.sql.gz`],
    ["attachment; filename=plain.sql.gz", "plain.sql.gz"],
    ["attachment; filename*=UTF-8''caf%C3%A9.sql.gz; filename=\"cafe.sql.gz\"", "café.sql.gz"],
    ['attachment; filename="../../etc/passwd"', "passwd"],
    ['attachment; filename="a\\\\..\\\\evil.gz"', "evil.gz"],
    ['attachment; filename=".."', undefined],
    ["attachment", undefined],
    [null, undefined],
  ])("Content-Disposition %s names %s, never a path", (header, name) => {
    expect(filenameFromDisposition(header)).toBe(name);
  });

  it.each([
    ["ab".repeat(32), "ab".repeat(32)],
    [` ${"AB".repeat(32)} `, "ab".repeat(32)],
    ["ab".repeat(31), undefined],
    ["zz".repeat(32), undefined],
    [null, undefined],
  ])("X-Export-SHA256 %s -> %s", (header, sha) => {
    expect(readSha256(header)).toBe(sha);
  });

  it("reads the export id from the link and derives the fallback name", () => {
    expect(exportIdOf(LINK)).toBe(EID);
    expect(fallbackFilename(LINK, DB)).toBe(`${DB}-${EID}.sql.gz`);
    expect(exportIdOf("not a url")).toBeUndefined();
    expect(fallbackFilename("https://x.test/other", DB)).toBe(`${DB}.sql.gz`);
  });
});

describe("state file of started links", () => {
  const dir = mkdtempSync(join(tmpdir(), "cli-state-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["valid, same server", "2026-11-21T12:30:00Z", "https://api.example.com", true],
    ["same server with a path prefix", "2026-11-21T12:30:00Z", "https://api.example.com/", true],
    ["another server", "2026-11-21T12:30:00Z", "https://other.example.com", false],
    ["expired", "2026-11-21T11:59:00Z", "https://api.example.com", false],
    ["about to expire", "2026-11-21T12:00:03Z", "https://api.example.com", false],
    ["unreadable expiry", "tomorrow", "https://api.example.com", false],
  ])("%s -> %s", (_name, expiresAt, baseUrl, usable) => {
    expect(isUsableLink({ url: LINK, expiresAt }, baseUrl, NOW)).toBe(usable);
  });

  it("lives in EXPORT_STATE_DIR, else XDG_STATE_HOME, else ~/.local/state", () => {
    expect(stateDirectory({ EXPORT_STATE_DIR: "/s" }, "/home/u")).toBe("/s");
    expect(stateDirectory({ XDG_STATE_HOME: "/x" }, "/home/u")).toBe("/x/dbexport");
    expect(stateDirectory({}, "/home/u")).toBe("/home/u/.local/state/dbexport");
  });

  it("keeps a link privately per database until it expires or is forgotten", () => {
    let now = NOW;
    const store = new LinkStore(join(dir, "nested"), () => now);
    const link = { url: LINK, expiresAt: "2026-11-21T12:30:00Z" };
    expect(store.load(DB, "https://api.example.com")).toBeUndefined();
    store.save(DB, link);
    const file = join(dir, "nested", `${DB}.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ url: LINK, expires_at: link.expiresAt });
    expect(store.load(DB, "https://api.example.com")).toEqual(link);
    expect(store.load(DB, "https://other.example.com")).toBeUndefined();
    now = Date.parse("2026-11-21T12:31:00Z");
    expect(store.load(DB, "https://api.example.com")).toBeUndefined();
    expect(() => statSync(file)).toThrow();
    store.save(DB, link);
    store.forget(DB);
    expect(() => statSync(file)).toThrow();
    writeFileSync(file, "{not json");
    expect(store.load(DB, "https://api.example.com")).toBeUndefined();
  });
});

describe("command line", () => {
  const env = { EXPORT_API_URL: "https://api.example.com/", EXPORT_API_TOKEN: "dbx_secret" };

  it("reads the options and takes the token from EXPORT_API_TOKEN", () => {
    expect(parseCommand(["export", DB, "--output", "a.sql.gz", "--quiet", "--json", "--no-wait"], env)).toEqual({
      kind: "export",
      options: { databaseId: DB, baseUrl: "https://api.example.com", token: "dbx_secret", output: "a.sql.gz", quiet: true, json: true, noWait: true },
    });
    expect(parseCommand(["export", DB, "--base-url", "http://localhost:8787"], env)).toMatchObject({
      options: { baseUrl: "http://localhost:8787", quiet: false, json: false, noWait: false },
    });
    expect(parseCommand(["--help"], {})).toEqual({ kind: "help" });
  });

  it.each([
    [["export", DB, "--token", "x"], env, /no --token option: set EXPORT_API_TOKEN/],
    [["export", DB, "--token=x"], env, /no --token option/],
    [["export", DB], { EXPORT_API_URL: "https://a.test" }, /EXPORT_API_TOKEN is not set/],
    [["export", DB], { EXPORT_API_TOKEN: "t" }, /--base-url or set EXPORT_API_URL/],
    [["export", DB, "--base-url", "ftp://x"], env, /must start with http/],
    [["export", "not-a-uuid"], env, /must be a UUID/],
    [["export"], env, /expected: export <database_id>/],
    [["import", DB], env, /expected: export <database_id>/],
    [["export", DB, "extra"], env, /expected/],
    [["export", DB, "--output", ""], env, /--output needs a file name/],
    [["export", DB, "--verbose"], env, /verbose/],
  ])("%j is a usage error", (argv, environment, message) => {
    expect(() => parseCommand(argv, environment)).toThrow(message);
    try {
      parseCommand(argv, environment);
    } catch (error) {
      expect((error as { exitCode: number }).exitCode).toBe(ExitCode.USAGE);
    }
  });
});

describe("progress and summary", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1536, "1.5 KiB"],
    [5 * 1024 * 1024, "5.0 MiB"],
  ])("formatBytes(%d) = %s", (bytes, text) => expect(formatBytes(bytes)).toBe(text));

  it.each([
    [7, "7s"],
    [65, "1m05s"],
    [3600, "60m00s"],
  ])("formatDuration(%d) = %s", (seconds, text) => expect(formatDuration(seconds)).toBe(text));

  it("shows bar, bytes, rate and ETA", () => {
    expect(renderProgress(512, 1024, 256, 10)).toBe("[#####-----]  50%  512 B / 1.0 KiB  256 B/s  ETA 2s");
    expect(renderProgress(2048, undefined, 1024)).toBe("2.0 KiB  1.0 KiB/s");
  });

  it("draws a bar only on a terminal and nothing at all with --quiet", () => {
    const written = (isTTY: boolean, quiet: boolean) => {
      let out = "";
      const reporter = createReporter({ write: (t: string) => (out += t), isTTY }, quiet, () => 1000);
      reporter.progress(10, 100);
      reporter.phase("export pending, retrying in 2 s");
      reporter.finish();
      return out;
    };
    expect(written(true, false)).toContain("[##");
    expect(written(true, false)).toContain("export pending, retrying in 2 s\n");
    expect(written(false, false)).toBe("export pending, retrying in 2 s\n");
    expect(written(true, true)).toBe("");
  });

  it("prints one JSON line with --json, one sentence otherwise, nothing with --quiet", () => {
    const result = { databaseId: DB, exportId: EID, file: "/tmp/x.sql.gz", bytes: 10, sha256: "ab".repeat(32) };
    expect(JSON.parse(formatSummary(result, true, false))).toEqual({
      ok: true, database_id: DB, export_id: EID, file: "/tmp/x.sql.gz", bytes: 10, sha256: "ab".repeat(32),
    });
    expect(formatSummary(result, true, true).trim().split("\n")).toHaveLength(1);
    expect(formatSummary(result, false, false)).toBe(`saved /tmp/x.sql.gz (10 bytes, sha256 ${"ab".repeat(32)})\n`);
    expect(formatSummary(result, false, true)).toBe("");
  });
});

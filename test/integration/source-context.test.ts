import { createTarDecoder, createTarPacker, unpackTar, type TarHeader } from "modern-tar";
import { describe, expect, it } from "vitest";
import { gzipStream } from "../../src/exports/gzip";
import { ArchiveError, buildContextFromArchive, type ArchiveInspection } from "../../src/source/context";

// SPEC.md App deployment contract 1: the build context is the root directory; the Dockerfile path
// is relative to it. SPEC.md Errors: the failed-deploy message lists the build files found.

type Entry = { name: string; body?: string; type?: TarHeader["type"]; mode?: number; linkname?: string };

const encoder = new TextEncoder();

/** A forge-style archive: every entry under `top/`, gzip-compressed as it is read. */
function forgeArchive(entries: Entry[], top = "shop-main"): ReadableStream<Uint8Array> {
  const { readable, controller } = createTarPacker();
  void (async () => {
    for (const entry of entries) {
      const bytes = encoder.encode(entry.body ?? "");
      const name = entry.type === "pax-global-header" ? entry.name : `${top}/${entry.name}`;
      const sink = controller.add({ name, size: bytes.length, type: entry.type ?? "file", mode: entry.mode, linkname: entry.linkname });
      const writer = sink.getWriter();
      if (bytes.length > 0) await writer.write(bytes);
      await writer.close();
    }
    controller.finalize();
  })();
  return readable.pipeThrough(new CompressionStream("gzip"));
}

const REPOSITORY: Entry[] = [
  { name: "", type: "directory" },
  { name: "README.md", body: "# shop" },
  { name: "web.Dockerfile", body: "FROM nginx\nEXPOSE 80\n" },
  { name: "docker/", type: "directory" },
  { name: "docker/Dockerfile", body: "FROM alpine\n" },
  { name: "api/", type: "directory", mode: 0o755 },
  { name: "api/Dockerfile", body: "FROM node:22\nEXPOSE 3000\n" },
  { name: "api/run.sh", body: "#!/bin/sh\nnode .\n", mode: 0o755 },
  { name: "api/current", type: "symlink", linkname: "run.sh" },
  { name: "api/src/", type: "directory" },
  { name: "api/src/index.js", body: "console.log(1)\n" },
  { name: "services/", type: "directory" },
  { name: "services/worker/", type: "directory" },
  { name: "services/worker/docker/", type: "directory" },
  { name: "services/worker/docker/prod.Dockerfile", body: "FROM golang\nEXPOSE 9000\n" },
  { name: "services/worker/main.go", body: "package main\n" },
];

const FOUND = ["api/Dockerfile", "docker/Dockerfile", "services/worker/docker/prod.Dockerfile", "web.Dockerfile"];

/** The context's entries, read back with their bodies as text. */
async function contextEntries(context: ReadableStream<Uint8Array>) {
  const entries = await unpackTar(context, { strict: true });
  return entries.map(({ header, data }) => ({
    name: header.name,
    type: header.type,
    mode: header.mode,
    ...(header.linkname ? { linkname: header.linkname } : {}),
    ...(header.pax ? { pax: header.pax } : {}),
    ...(header.type === "file" ? { text: new TextDecoder().decode(data) } : {}),
  }));
}

async function run(archive: ReadableStream<Uint8Array>, rootDirectory: string, dockerfilePath: string, maxBuildFileBytes?: number) {
  const { context, inspection } = buildContextFromArchive(archive, { rootDirectory, dockerfilePath, maxBuildFileBytes });
  const entries = await contextEntries(context);
  return { entries, inspection: await inspection };
}

describe("buildContextFromArchive", () => {
  it("strips the top folder and passes the whole repository when the root is the repository root", async () => {
    const { entries, inspection } = await run(forgeArchive(REPOSITORY), "", "web.Dockerfile");
    expect(entries.map((e) => e.name)).toEqual(REPOSITORY.slice(1).map((e) => e.name));
    expect(inspection).toEqual<ArchiveInspection>({ dockerfile: "FROM nginx\nEXPOSE 80\n", buildFiles: FOUND, commitSha: null });
  });

  it("passes only the root directory, paths relative to it, modes and symlinks kept", async () => {
    const { entries, inspection } = await run(forgeArchive(REPOSITORY), "api", "api/Dockerfile");
    expect(entries).toEqual([
      { name: "Dockerfile", type: "file", mode: 0o644, text: "FROM node:22\nEXPOSE 3000\n" },
      { name: "run.sh", type: "file", mode: 0o755, text: "#!/bin/sh\nnode .\n" },
      { name: "current", type: "symlink", mode: 0o644, linkname: "run.sh" },
      { name: "src/", type: "directory", mode: 0o755 },
      { name: "src/index.js", type: "file", mode: 0o644, text: "console.log(1)\n" },
    ]);
    // The list covers the whole repository, not just the root directory.
    expect(inspection).toEqual({ dockerfile: "FROM node:22\nEXPOSE 3000\n", buildFiles: FOUND, commitSha: null });
  });

  it("takes a nested root directory with the build file in a folder of it", async () => {
    const { entries, inspection } = await run(forgeArchive(REPOSITORY), "services/worker", "services/worker/docker/prod.Dockerfile");
    expect(entries.map((e) => e.name)).toEqual(["docker/", "docker/prod.Dockerfile", "main.go"]);
    expect(inspection.dockerfile).toBe("FROM golang\nEXPOSE 9000\n");
  });

  it("reports no build file at the resolved path, with the build files found", async () => {
    const { entries, inspection } = await run(forgeArchive(REPOSITORY), "docker", "docker/docker/Dockerfile");
    expect(entries.map((e) => e.name)).toEqual(["Dockerfile"]);
    expect(inspection).toEqual({ dockerfile: null, buildFiles: FOUND, commitSha: null });
  });

  it("finds no build files in a repository without any", async () => {
    const { inspection } = await run(forgeArchive([{ name: "index.html", body: "<p>hi</p>" }]), "", "Dockerfile");
    expect(inspection).toEqual({ dockerfile: null, buildFiles: [], commitSha: null });
  });

  it("skips the pax global header git archive writes, and carries no pax records over", async () => {
    const record = "52 comment=0123456789abcdef0123456789abcdef01234567\n";
    const archive = forgeArchive([{ name: "pax_global_header", type: "pax-global-header", body: record }, { name: "Dockerfile", body: "FROM x\n" }]);
    const { entries, inspection } = await run(archive, "", "Dockerfile");
    expect(entries).toEqual([{ name: "Dockerfile", type: "file", mode: 0o644, text: "FROM x\n" }]);
    // Its comment names the commit the archive was made from (deploy history).
    expect(inspection.commitSha).toBe("0123456789abcdef0123456789abcdef01234567");
  });

  it("reads the commit from a top folder named <repo>-<sha>, as GitHub's archives are", async () => {
    const sha = "89abcdef0123456789abcdef0123456789abcdef";
    const { inspection } = await run(forgeArchive([{ name: "Dockerfile", body: "FROM x\n" }], `shop-${sha}`), "", "Dockerfile");
    expect(inspection.commitSha).toBe(sha);
  });

  it("keeps long names (pax path records), renamed relative to the root", async () => {
    const long = `${"deep/".repeat(30)}${"n".repeat(120)}.txt`;
    const { entries } = await run(forgeArchive([{ name: `api/${long}`, body: "x" }]), "api", "api/Dockerfile");
    // The writer gives the new name its own pax record; none of the archive's records comes along.
    expect(entries).toEqual([{ name: long, type: "file", mode: 0o644, pax: { path: long }, text: "x" }]);
  });

  it("streams a 50 MB file through without holding it", async () => {
    const SIZE = 50 * 1024 * 1024;
    const CHUNK = 64 * 1024;
    let produced = 0;
    let consumed = 0;
    let furthestAhead = 0;
    // Incompressible bytes: compressed and plain sizes match, so bytes taken in and handed on compare.
    const piece = (index: number) => {
      const words = new Uint32Array(CHUNK / 4);
      let x = (index + 1) * 2654435761;
      for (let i = 0; i < words.length; i++) words[i] = x = (x ^ (x << 13) ^ (x >>> 17) ^ (x << 5)) >>> 0;
      return new Uint8Array(words.buffer);
    };
    const { readable, controller } = createTarPacker();
    void (async () => {
      const writer = controller.add({ name: "shop-main/data.bin", size: SIZE }).getWriter();
      for (let i = 0; i < SIZE / CHUNK; i++) {
        await writer.write(piece(i));
        produced += CHUNK;
      }
      await writer.close();
      controller.finalize();
    })();

    let pulled = 0;
    let pulledAhead = 0;
    // The runtime's CompressionStream holds its output until its input ends (see src/exports/gzip.ts),
    // so the archive is made with the streaming gzip the exports use.
    const count = new TransformStream<Uint8Array, Uint8Array>(
      { transform: (chunk, c) => void ((pulled += chunk.length), c.enqueue(chunk)) },
      { highWaterMark: 0 },
      { highWaterMark: 0 },
    );
    const counted = gzipStream(readable).pipeThrough(count);
    const { context, inspection } = buildContextFromArchive(counted, { rootDirectory: "", dockerfilePath: "Dockerfile" });
    const entries = context.pipeThrough(createTarDecoder({ strict: true })).getReader();
    const first = await entries.read();
    expect(first.value?.header).toMatchObject({ name: "data.bin", size: SIZE });
    let expected = new Uint8Array(0);
    let index = 0;
    for await (const chunk of first.value!.body) {
      for (let offset = 0; offset < chunk.length; ) {
        if (expected.length === 0) expected = piece(index++);
        const n = Math.min(expected.length, chunk.length - offset);
        if (!chunk.subarray(offset, offset + n).every((byte, i) => byte === expected[i])) throw new Error(`bytes differ near ${consumed}`);
        expected = expected.subarray(n);
        offset += n;
        consumed += n;
      }
      furthestAhead = Math.max(furthestAhead, produced - consumed);
      pulledAhead = Math.max(pulledAhead, pulled - consumed);
    }
    expect((await entries.read()).done).toBe(true);
    expect(consumed).toBe(SIZE);
    expect(await inspection).toEqual({ dockerfile: null, buildFiles: [], commitSha: null });
    // The test's own tar writer queues up to 8 MiB ahead; never the whole file.
    expect(furthestAhead).toBeLessThan(24 * 1024 * 1024);
    // What it takes in is what it has handed on, give or take one piece in each stage.
    expect(pulledAhead).toBeLessThan(4 * 1024 * 1024);
  }, 120_000);

  it.each<[string, () => ReadableStream<Uint8Array>, string]>([
    ["an HTML page instead of an archive", () => bytes("<!DOCTYPE html>"), "it is not gzip data (it starts with bytes 3c 21)"],
    ["an empty body", () => bytes(""), "it is empty"],
    ["gzip of something that is not tar", () => bytes("x".repeat(2000)).pipeThrough(new CompressionStream("gzip")), "its tar data is damaged ("],
    ["a truncated archive", () => truncated(forgeArchive(REPOSITORY)), "its gzip data is damaged"],
    ["entries under two top folders", () => twoTops(), 'its entries are not all inside one top folder ("a/" and "b/x"), as a forge archive\'s are'],
  ])("%s errors the context and rejects the inspection", async (_name, archive, reason) => {
    const { context, inspection } = buildContextFromArchive(archive(), { rootDirectory: "", dockerfilePath: "Dockerfile" });
    const read = new Response(context).arrayBuffer();
    await expect(read).rejects.toThrow(ArchiveError);
    const error = await inspection.then(() => null, (err: ArchiveError) => err);
    expect(error).toBeInstanceOf(ArchiveError);
    expect(error?.reason.startsWith(reason)).toBe(true);
    expect(error?.message).toBe(`The repository archive could not be read: ${error?.reason}.`);
  });

  it("refuses a build file over the size bound", async () => {
    const { context, inspection } = buildContextFromArchive(forgeArchive(REPOSITORY), { rootDirectory: "", dockerfilePath: "api/Dockerfile", maxBuildFileBytes: 10 });
    await expect(new Response(context).arrayBuffer()).rejects.toThrow(ArchiveError);
    await expect(inspection).rejects.toThrow('the build file "api/Dockerfile" is larger than 10 bytes');
  });
});

function bytes(text: string): ReadableStream<Uint8Array> {
  return new Response(text).body!;
}

/** The archive cut off after its first 200 compressed bytes. */
function truncated(archive: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream({
    async start(controller) {
      const all = new Uint8Array(await new Response(archive).arrayBuffer());
      controller.enqueue(all.slice(0, 200));
      controller.close();
    },
  });
}

function twoTops(): ReadableStream<Uint8Array> {
  const { readable, controller } = createTarPacker();
  void (async () => {
    for (const name of ["a/x", "b/x"]) {
      const writer = controller.add({ name, size: 1 }).getWriter();
      await writer.write(encoder.encode("1"));
      await writer.close();
    }
    controller.finalize();
  })();
  return readable.pipeThrough(new CompressionStream("gzip"));
}

import { createTarPacker, type TarHeader, unpackTar } from "modern-tar";
import { describe, expect, it } from "vitest";
import { buildSourceRefusal } from "../../src/apps/contract/build-sources";
import { BuildFileRefusedError, buildContextFromArchive } from "../../src/source/context";

// docs/security.md, "Builds and source fetches": a build may start only from scratch, an
// earlier stage or an image in a registry, refused before the build starts. The engine gets a
// whole context only once the build file was found as a plain file and passed the rule: a refused,
// missing or linked build file breaks the context off before its end.

type Entry = { name: string; body?: string; type?: TarHeader["type"]; linkname?: string };
const encoder = new TextEncoder();

function forgeArchive(entries: Entry[]): ReadableStream<Uint8Array> {
  const { readable, controller } = createTarPacker();
  void (async () => {
    for (const entry of entries) {
      const bytes = encoder.encode(entry.body ?? "");
      const writer = controller.add({ name: `shop-main/${entry.name}`, size: bytes.length, type: entry.type ?? "file", linkname: entry.linkname }).getWriter();
      if (bytes.length > 0) await writer.write(bytes);
      await writer.close();
    }
    controller.finalize();
  })();
  return readable.pipeThrough(new CompressionStream("gzip"));
}

function build(entries: Entry[], dockerfilePath = "Dockerfile") {
  return buildContextFromArchive(forgeArchive(entries), { rootDirectory: "", dockerfilePath, checkBuildFile: (text) => buildSourceRefusal(text) });
}

const GOOD = "FROM scratch\nCOPY app /app\n";
const BAD = "FROM scratch\nCOPY --from=control-plane/app-a1:d2 /secret.txt /s\n";

describe("buildContextFromArchive with the build-source rule", () => {
  it("ends the context of a build file that passes", async () => {
    const { context, inspection } = build([{ name: "Dockerfile", body: GOOD }, { name: "app", body: "x" }]);
    const entries = await unpackTar(context, { strict: true });
    expect(entries.map((e) => e.header.name)).toEqual(["Dockerfile", "app"]);
    expect((await inspection).dockerfile).toBe(GOOD);
  });

  it("breaks the context off for a refused build file, the sentence naming the line", async () => {
    const { context, inspection } = build([{ name: "Dockerfile", body: BAD }, { name: "app", body: "x" }]);
    await expect(new Response(context).arrayBuffer()).rejects.toThrow(BuildFileRefusedError);
    await expect(inspection).rejects.toThrow(/^Dockerfile line 2: COPY --from=control-plane\/app-a1:d2 names an image on the build engine, not in a registry\./);
  });

  it.each<[string, Entry[]]>([
    ["no build file (the engine would fall back to a lower-case dockerfile)", [{ name: "dockerfile", body: BAD }]],
    ["a build file replaced by a later link", [{ name: "Dockerfile", body: GOOD }, { name: "evil", body: BAD }, { name: "Dockerfile", type: "symlink", linkname: "evil" }]],
    ["a build file replaced by a later hard link", [{ name: "evil", body: BAD }, { name: "Dockerfile", body: GOOD }, { name: "Dockerfile", type: "link", linkname: "shop-main/evil" }]],
  ])("breaks the context off with the build file missing: %s", async (_name, entries) => {
    const { context, inspection } = build(entries);
    await expect(new Response(context).arrayBuffer()).rejects.toThrow();
    expect((await inspection).dockerfile).toBeNull();
  });

  it("breaks the context off when a folder of the build file's path is a link", async () => {
    const entries: Entry[] = [
      { name: "docker/", type: "directory" },
      { name: "docker/Dockerfile", body: GOOD },
      { name: "evil/", type: "directory" },
      { name: "evil/Dockerfile", body: BAD },
      { name: "docker", type: "symlink", linkname: "evil" },
    ];
    const { context, inspection } = build(entries, "docker/Dockerfile");
    await expect(new Response(context).arrayBuffer()).rejects.toThrow();
    expect((await inspection).dockerfile).toBeNull();
  });

  it("checks the last of two build files at one path, the one the engine unpacks", async () => {
    const { context, inspection } = build([{ name: "Dockerfile", body: GOOD }, { name: "Dockerfile", body: BAD }]);
    await expect(new Response(context).arrayBuffer()).rejects.toThrow(BuildFileRefusedError);
    await expect(inspection).rejects.toThrow(BuildFileRefusedError);
  });
});

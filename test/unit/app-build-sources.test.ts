import { describe, expect, it } from "vitest";
import { BUILD_SOURCES_RULE, buildSourceRefusal, parseReference } from "../../src/apps/contract/build-sources";

// docs/security.md, "Builds and source fetches": a build may start (FROM, COPY --from,
// RUN --mount=from=) only from scratch, an earlier stage of the same Dockerfile, or an image in a
// registry; never from an image the build engine holds for someone else (by id prefix or by the
// platform's names), a registry on the engine's own network, or a reference whose value the
// Dockerfile does not give. A refusal names the line.

const lines = (...text: string[]) => text.join("\n");
const ENGINE = "names an image on the build engine, not in a registry";
const NETWORK = "names a registry on the build engine's own network";
const refused = (line: number, shown: string, clause = ENGINE) => `Dockerfile line ${line}: ${shown} ${clause}. ${BUILD_SOURCES_RULE}`;
const SWARM = { registry: "registry.example.net:5000/apps" };

describe("buildSourceRefusal", () => {
  it.each<[string, string, string | null]>([
    // Allowed
    ["scratch", lines("FROM scratch", "COPY app /app"), null],
    ["a Docker Hub image", "FROM node:22", null],
    ["an image by digest", `FROM node@sha256:${"a".repeat(64)}`, null],
    ["an image on a public registry", "FROM ghcr.io/acme/web:1.2", null],
    ["an explicit docker.io library path with a hex-looking name", "FROM docker.io/library/beef", null],

    ["--platform before the image", "FROM --platform=$BUILDPLATFORM golang:1.22 AS build", null],
    ["multi-stage by name, FROM and COPY --from", lines("FROM golang AS build", "RUN make", "FROM build AS test", "FROM scratch", "COPY --from=build /out /app"), null],
    ["stage names are matched without regard to case", lines("FROM golang AS Build", "FROM scratch", "COPY --from=BUILD /out /app"), null],
    ["a stage named like hex is still a stage", lines("FROM scratch AS abc", "FROM scratch", "COPY --from=abc /x /x"), null],
    ["COPY --from an earlier stage's index", lines("FROM golang", "FROM scratch", "COPY --from=0 /out /app"), null],
    ["COPY --from an image in a registry", lines("FROM scratch", "COPY --from=nginx:1.27 /etc/nginx /etc/nginx"), null],
    ["RUN --mount from an earlier stage", lines("FROM golang AS deps", "FROM golang", "RUN --mount=type=bind,from=deps,target=/deps make"), null],
    ["RUN --mount without from", lines("FROM golang", "RUN --mount=type=cache,target=/root/.cache go build"), null],
    ["ARG default used in FROM", lines("ARG BASE=node:22", "FROM ${BASE}"), null],
    ["ARG default with ${X:-fallback}", lines("ARG TAG", "FROM node:${TAG:-22}"), null],
    ["ARG built from an earlier ARG", lines("ARG V=22", "ARG BASE=node:$V", "FROM $BASE"), null],
    ["a quoted image name", 'FROM "node:22"', null],
    ["lower-case instructions", lines("from golang as build", "from scratch", "copy --from=build /a /a"), null],
    ["the syntax directive naming the Dockerfile frontend", lines("# syntax=docker/dockerfile:1", "FROM node"), null],
    ["a RUN mentioning FROM is not an instruction", lines("FROM node", "RUN echo FROM 9983f5"), null],

    // Refused: the engine's own images
    ["an id prefix", lines("FROM 9983f5", "RUN cat /secret.txt"), refused(1, "FROM 9983f5")],
    ["a hex-looking name is refused even with a tag (written docker.io/library/cafe it passes)", "FROM cafe:1", refused(1, "FROM cafe:1")],
    ["a one-character id prefix", "FROM a", refused(1, "FROM a")],
    ["an id by sha256:", `FROM sha256:${"9".repeat(64)}`, refused(1, `FROM sha256:${"9".repeat(64)}`)],
    ["a full 64-digit id", `FROM ${"c".repeat(64)}`, refused(1, `FROM ${"c".repeat(64)}`)],
    ["an app's image by name", lines("FROM scratch", "", "FROM control-plane/app-a1:d2"), refused(3, "FROM control-plane/app-a1:d2")],
    ["an app's image under docker.io", "FROM docker.io/control-plane/app-a1:d2", refused(1, "FROM docker.io/control-plane/app-a1:d2")],
    ["COPY --from an app's image", lines("FROM scratch", "COPY --from=control-plane/app-a1:d2 /secret.txt /s"), refused(2, "COPY --from=control-plane/app-a1:d2")],
    ["COPY --from an id prefix", lines("FROM scratch", "COPY --from=9983f5 /secret.txt /s"), refused(2, "COPY --from=9983f5")],
    ["COPY --from a stage index not yet built", lines("FROM scratch", "COPY --from=1 /x /x"), refused(2, "COPY --from=1")],
    ["COPY --from a stage defined later is an image", lines("FROM scratch", "COPY --from=abc /x /x", "FROM scratch AS abc"), refused(2, "COPY --from=abc")],
    ["COPY --from its own stage is an image", lines("FROM scratch AS abc", "COPY --from=abc /x /x"), refused(2, "COPY --from=abc")],
    ["RUN --mount from an app's image", lines("FROM golang", "RUN --mount=type=bind,from=control-plane/app-a1:d2,target=/m cat /m/secret"), refused(2, "RUN --mount=type=bind,from=control-plane/app-a1:d2,target=/m")],
    ["RUN --mount from an id prefix, quoted", lines("FROM golang", 'RUN --mount="from=9983f5,target=/m" cat /m/secret'), refused(2, 'RUN --mount="from=9983f5,target=/m"')],
    ["ONBUILD COPY --from an app's image", lines("FROM node", "ONBUILD COPY --from=control-plane/app-a1:d2 / /"), refused(2, "ONBUILD COPY --from=control-plane/app-a1:d2")],
    ["ARG default naming an id prefix", lines("ARG BASE=9983f5", "FROM $BASE"), refused(2, "FROM $BASE")],
    ["quotes do not hide an id", 'FROM "9983f5"', refused(1, 'FROM "9983f5"')],
    ["an escape does not hide an id", "FROM 99\\83f5", refused(1, "FROM 99\\83f5")],
    ["a continuation line", lines("FROM \\", "  control-plane/app-a1:d2"), refused(1, "FROM control-plane/app-a1:d2")],
    ["after a comment inside a continuation", lines("FROM scratch", "COPY \\", "# note", "  --from=9983f5 /a /a"), refused(2, "COPY --from=9983f5")],
    ["the escape directive", lines("# escape=`", "FROM scratch", "COPY `", "  --from=9983f5 /a /a"), refused(3, "COPY --from=9983f5")],
    ["an escape directive the engine would not read cannot hide a line", lines("#  escape = `", "FROM scratch", "COPY `", "  --from=9983f5 /a /a"), refused(3, "COPY --from=9983f5")],
    ["a heredoc body line is read as an instruction (Docker 20.10 has no heredocs)", lines("FROM node", "RUN <<EOF", "FROM 9983f5", "EOF"), refused(3, "FROM 9983f5")],
    ["the syntax directive naming an app's image", lines("# syntax=control-plane/app-a1:d2", "FROM node"), refused(1, "# syntax=control-plane/app-a1:d2")],

    // Refused: registries on the engine's network
    ["localhost registry", "FROM localhost:5000/app", refused(1, "FROM localhost:5000/app", NETWORK)],
    ["loopback address", "FROM 127.0.0.1:5000/app", refused(1, "FROM 127.0.0.1:5000/app", NETWORK)],
    ["private address", "FROM 10.0.0.5:5000/app:1", refused(1, "FROM 10.0.0.5:5000/app:1", NETWORK)],
    ["a name without a dot", "FROM registry:5000/app", refused(1, "FROM registry:5000/app", NETWORK)],
    ["a private-use suffix", "FROM registry.internal/app", refused(1, "FROM registry.internal/app", NETWORK)],

    // Refused: not known before the build, or not an image name
    ["an ARG the engine sets", lines("ARG TARGETARCH=amd64", "FROM node:22-$TARGETARCH"), refused(2, "FROM node:22-$TARGETARCH", "uses $TARGETARCH, whose value is not known before the build (only ARG defaults given before the first FROM are)")],
    ["an unknown substitution form", lines("ARG B=node", "FROM ${B/n/m}"), refused(2, "FROM ${B/n/m}", "cannot be read (the substitution ${B/n/m})")],
    ["an unclosed quote", 'FROM "node', refused(1, 'FROM "node', "cannot be read (an unclosed double quote)")],
    ["an upper-case name", "FROM Node", refused(1, "FROM Node", "is not an image name")],
    ["an empty ARG", lines("ARG BASE", "FROM $BASE"), refused(2, "FROM $BASE", "is not an image name")],
  ])("%s", (_name, text, expected) => {
    expect(buildSourceRefusal(text)).toBe(expected);
  });

  it.each<[string, string, string | null]>([
    ["the platform's registry", "FROM registry.example.net:5000/apps/app-a1:d2", refused(1, "FROM registry.example.net:5000/apps/app-a1:d2", "names an image in this platform's own registry, where apps' images are kept")],
    ["any repository on the platform's registry", "FROM registry.example.net:5000/other", refused(1, "FROM registry.example.net:5000/other", "names an image in this platform's own registry, where apps' images are kept")],
    ["an app's image on another name for the registry", "FROM mirror.example.org/apps/control-plane/app-a1:d2", refused(1, "FROM mirror.example.org/apps/control-plane/app-a1:d2")],
    ["another registry", "FROM registry.example.org/app:1", null],
  ])("on a swarm: %s", (_name, text, expected) => {
    expect(buildSourceRefusal(text, SWARM)).toBe(expected);
  });
});

describe("parseReference", () => {
  it.each<[string, ReturnType<typeof parseReference>]>([
    ["node", { domain: null, path: "node" }],
    ["node:22", { domain: null, path: "node" }],
    ["acme/web", { domain: null, path: "acme/web" }],
    ["ghcr.io/acme/web:1", { domain: "ghcr.io", path: "acme/web" }],
    ["localhost/web", { domain: "localhost", path: "web" }],
    ["registry:5000/web", { domain: "registry:5000", path: "web" }],
    [`web@sha256:${"a".repeat(64)}`, { domain: null, path: "web" }],
    ["Web", null],
    ["web:", null],
    ["web@sha256:12", null],
    ["", null],
  ])("%s", (text, expected) => {
    expect(parseReference(text)).toEqual(expected);
  });
});

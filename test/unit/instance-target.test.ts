/**
 * How the proxy reaches an instance addressed by engine, node and port (README "Deploying"):
 * directly at the engine's URL, or through the node proxy on the instance's machine with
 * `X-Instance-Port` and the Access service token; only swarm instances move by themselves.
 */
import { describe, expect, it } from "vitest";
import { instanceTarget, mayMove } from "../../src/routing/instance-target";

const swarmPlace = { instanceUrl: "http://10.0.0.12:20001", engine: "swarm:engine.example.net", node: "node2.example.net", port: 20001 };
const legacyPlace = { instanceUrl: "http://127.0.0.1:32768", engine: null, node: null, port: null };
const token = { clientId: "id-0123456789", clientSecret: "secret-0123456789" };

describe("instanceTarget", () => {
  it.each([
    ["no node proxy: the engine's URL", swarmPlace, { url: "", ...token }, { url: "http://10.0.0.12:20001", headers: {} }],
    [
      "node proxy: the node's host, the port as a header, the token",
      swarmPlace,
      { url: "https://{node}", ...token },
      { url: "https://node2.example.net", headers: { "X-Instance-Port": "20001", "CF-Access-Client-Id": token.clientId, "CF-Access-Client-Secret": token.clientSecret } },
    ],
    ["node proxy with a name around the node", swarmPlace, { url: "https://proxy-{node}:8443", clientId: "", clientSecret: "" }, { url: "https://proxy-node2.example.net:8443", headers: { "X-Instance-Port": "20001" } }],
    ["a row without node and port: the engine's URL", legacyPlace, { url: "https://{node}", ...token }, { url: "http://127.0.0.1:32768", headers: {} }],
  ])("%s", (_name, place, proxy, target) => expect(instanceTarget(place, proxy)).toEqual(target));
});

describe("mayMove", () => {
  it.each([
    [swarmPlace, true],
    [{ ...swarmPlace, engine: "docker:127.0.0.1:2375" }, false],
    [legacyPlace, false],
  ])("%j -> %s", (place, moves) => expect(mayMove(place)).toBe(moves));
});

import { describe, expect, it } from "vitest";
import { type Hop, appendAddress, dropHopByHopHeaders, forwardHeaders, isWebSocketUpgrade } from "../../src/routing/forward-headers";

// Issue 20, "Proxy": X-Forwarded-For is the incoming value with the address the Worker saw
// appended; Forwarded and X-Real-IP from the client are dropped; X-Forwarded-Proto and
// X-Forwarded-Host are set by us; headers named in Connection are removed (and the standard
// hop-by-hop headers); the WebSocket Upgrade is forwarded.

const hop: Hop = { host: "myapp.localhost:8787", proto: "http", client: "203.0.113.9" };

/** The rewritten headers as a sorted list of [name, value]. */
function rewrite(incoming: Record<string, string>, seen: Partial<Hop> = {}): Record<string, string> {
  return Object.fromEntries([...forwardHeaders(new Headers(incoming), { ...hop, ...seen }).entries()]);
}

const OURS = { "x-forwarded-for": "203.0.113.9", "x-forwarded-proto": "http", "x-forwarded-host": "myapp.localhost:8787" };

describe("forwardHeaders", () => {
  it.each<[string, Record<string, string>, Partial<Hop>, Record<string, string>]>([
    ["ordinary headers pass; ours are added", { accept: "text/html", cookie: "a=1" }, {}, { accept: "text/html", cookie: "a=1", ...OURS }],
    ["X-Forwarded-For: the client's chain, our address appended", { "x-forwarded-for": "198.51.100.1, 198.51.100.2" }, {}, { ...OURS, "x-forwarded-for": "198.51.100.1, 198.51.100.2, 203.0.113.9" }],
    ["X-Forwarded-For already ending with the address is not doubled", { "x-forwarded-for": "198.51.100.1,203.0.113.9" }, {}, { ...OURS, "x-forwarded-for": "198.51.100.1,203.0.113.9" }],
    ["X-Forwarded-For claiming our address earlier still gets it appended", { "x-forwarded-for": "203.0.113.9, 10.0.0.1" }, {}, { ...OURS, "x-forwarded-for": "203.0.113.9, 10.0.0.1, 203.0.113.9" }],
    ["IPv6 address appended", { "x-forwarded-for": "198.51.100.1" }, { client: "2001:db8::1" }, { ...OURS, "x-forwarded-for": "198.51.100.1, 2001:db8::1" }],
    ["no address seen: the client's chain is dropped, not vouched for", { "x-forwarded-for": "10.0.0.1" }, { client: null }, { "x-forwarded-proto": "http", "x-forwarded-host": "myapp.localhost:8787" }],
    ["Forwarded from the client is dropped", { forwarded: "for=10.0.0.1;proto=https" }, {}, OURS],
    ["X-Real-IP from the client is dropped", { "x-real-ip": "10.0.0.1" }, {}, OURS],
    ["X-Forwarded-Port from the client is dropped", { "x-forwarded-port": "443" }, {}, OURS],
    ["X-Forwarded-Proto from the client is replaced", { "x-forwarded-proto": "https" }, {}, OURS],
    ["X-Forwarded-Proto https when the client used https", { "x-forwarded-proto": "http" }, { proto: "https" }, { ...OURS, "x-forwarded-proto": "https" }],
    ["X-Forwarded-Host from the client is replaced", { "x-forwarded-host": "bank.example" }, {}, OURS],
    ["custom domain host is forwarded as asked", {}, { host: "shop.example.com" }, { ...OURS, "x-forwarded-host": "shop.example.com" }],
    [
      "standard hop-by-hop headers are dropped",
      { connection: "keep-alive", "keep-alive": "timeout=5", "proxy-connection": "keep-alive", te: "trailers", trailer: "x-sum", upgrade: "h2c", "proxy-authorization": "Basic eDp5", "proxy-authenticate": "Basic" },
      {},
      OURS,
    ],
    ["headers named in Connection are dropped, case-insensitively", { connection: "close, X-Secret ,x-other", "x-secret": "1", "x-other": "2", "x-kept": "3" }, {}, { ...OURS, "x-kept": "3" }],
    ["Connection naming X-Forwarded-For drops the client's chain only", { connection: "X-Forwarded-For", "x-forwarded-for": "10.0.0.1" }, {}, OURS],
    ["Connection naming our headers cannot remove them", { connection: "x-forwarded-proto, x-forwarded-host" }, {}, OURS],
    ["malformed names in Connection are ignored", { connection: "bad name, , ,x-a", "x-a": "1", "x-b": "2" }, {}, { ...OURS, "x-b": "2" }],
    [
      "a WebSocket handshake keeps Upgrade: websocket and its Sec-WebSocket headers",
      { connection: "Upgrade", upgrade: "WebSocket", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" },
      {},
      { ...OURS, upgrade: "websocket", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" },
    ],
  ])("%s", (_, incoming, seen, expected) => {
    expect(rewrite(incoming, seen)).toEqual(expected);
  });

  it("leaves the incoming headers untouched", () => {
    const incoming = new Headers({ connection: "x-a", "x-a": "1", forwarded: "for=x" });
    forwardHeaders(incoming, hop);
    expect([...incoming.keys()].sort()).toEqual(["connection", "forwarded", "x-a"]);
  });
});

describe("appendAddress", () => {
  it.each<[string | null, string, string]>([
    [null, "203.0.113.9", "203.0.113.9"],
    ["", "203.0.113.9", "203.0.113.9"],
    ["  ", "203.0.113.9", "203.0.113.9"],
    ["198.51.100.1", "203.0.113.9", "198.51.100.1, 203.0.113.9"],
    ["198.51.100.1, 203.0.113.9 ", "203.0.113.9", "198.51.100.1, 203.0.113.9"],
    ["203.0.113.90", "203.0.113.9", "203.0.113.90, 203.0.113.9"],
  ])("%j + %s -> %s", (chain, address, expected) => {
    expect(appendAddress(chain, address)).toBe(expected);
  });
});

describe("isWebSocketUpgrade", () => {
  it.each<[Record<string, string>, boolean]>([
    [{ upgrade: "websocket" }, true],
    [{ upgrade: " WebSocket " }, true],
    [{ upgrade: "h2c" }, false],
    [{ upgrade: "websocket, h2c" }, false],
    [{}, false],
  ])("%j -> %s", (headers, expected) => {
    expect(isWebSocketUpgrade(new Headers(headers))).toBe(expected);
  });
});

describe("dropHopByHopHeaders (RFC 9110 7.6.1: an instance's hop-by-hop headers never reach the client)", () => {
  it.each<[string, Record<string, string>, Record<string, string>]>([
    ["nothing to drop", { "content-type": "text/plain", "x-app": "1" }, { "content-type": "text/plain", "x-app": "1" }],
    [
      "the standard ones",
      { "content-type": "text/plain", "keep-alive": "timeout=5", "transfer-encoding": "chunked", trailer: "x-sum", upgrade: "h2c", "proxy-authenticate": "Basic", "proxy-connection": "keep-alive" },
      { "content-type": "text/plain" },
    ],
    ["those the instance named in Connection", { connection: "X-Hop-Secret, close", "x-hop-secret": "internal", "x-app": "1" }, { "x-app": "1" }],
    ["a Connection value that is not a header name is ignored", { connection: "x y, ,", "x-app": "1" }, { "x-app": "1" }],
  ])("%s", (_name, given, expected) => {
    const headers = new Headers(given);
    dropHopByHopHeaders(headers);
    expect(Object.fromEntries(headers.entries())).toEqual(expected);
  });
});

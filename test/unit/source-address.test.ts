import { describe, expect, it } from "vitest";
import { type AddressRefusal, addressRefusal, classifyHost, parseIpv6 } from "../../src/source/address";
import { MAX_REDIRECTS, decideHop } from "../../src/source/fetch";
import { repositoryProblem } from "../../src/source/forge";

// Source fetch rules (tenants sharing an engine cannot reach each other): every hop of a source
// fetch passes one address rule. http, loopback and private addresses only with
// ALLOW_LOCAL_SOURCES on; never link-local or cloud metadata addresses; IP literals in every form.

const OFF = { allowLocal: false };
const ON = { allowLocal: true };

describe("addressRefusal (the address rule)", () => {
  it.each<[string, AddressRefusal | null, AddressRefusal | null]>([
    // url, with ALLOW_LOCAL_SOURCES off, with it on
    ["https://github.com/acme/shop", null, null],
    ["https://codeload.github.com/acme/shop/tar.gz/refs/heads/main", null, null],
    ["https://git.example.net:3000/acme/shop", null, null],
    ["https://8.8.8.8/acme/shop", null, null],
    ["https://[2606:4700::1111]/acme/shop", null, null],
    ["http://git.example.net/acme/shop", "http", null],
    ["ftp://git.example.net/acme/shop", "not_http", "not_http"],
    ["file:///etc/passwd", "not_http", "not_http"],
    ["not a url", "not_http", "not_http"],
    ["https://user:secret@git.example.net/acme/shop", "credentials", "credentials"],
    // loopback and private, in every spelling
    ["http://127.0.0.1:3900/acme/shop", "local", null],
    ["https://127.0.0.1/acme/shop", "local", null],
    ["https://localhost/acme/shop", "local", null],
    ["https://forge.localhost/acme/shop", "local", null],
    ["https://LOCALHOST./acme/shop", "local", null],
    ["https://2130706433/acme/shop", "local", null], // decimal 127.0.0.1
    ["https://0x7f000001/acme/shop", "local", null], // hex
    ["https://0x7f.1/acme/shop", "local", null], // short hex
    ["https://0177.0.0.1/acme/shop", "local", null], // octal
    ["https://127.1/acme/shop", "local", null], // short form
    ["https://[::1]/acme/shop", "local", null],
    ["https://[::ffff:127.0.0.1]/acme/shop", "local", null], // IPv4-mapped
    ["https://[::ffff:7f00:1]/acme/shop", "local", null],
    ["https://[::127.0.0.1]/acme/shop", "local", null], // IPv4-compatible
    ["https://[64:ff9b::10.0.0.1]/acme/shop", "local", null], // NAT64
    ["https://[2002:c0a8:0101::1]/acme/shop", "local", null], // 6to4 of 192.168.1.1
    ["https://10.0.0.5/acme/shop", "local", null],
    ["https://172.16.0.1/acme/shop", "local", null],
    ["https://172.31.255.255/acme/shop", "local", null],
    ["https://172.32.0.1/acme/shop", null, null],
    ["https://192.168.1.1/acme/shop", "local", null],
    ["https://100.64.0.1/acme/shop", "local", null],
    ["https://[fd12:3456::1]/acme/shop", "local", null],
    ["https://gitea/acme/shop", "local", null], // single-label name
    ["https://git.corp.internal/acme/shop", "local", null],
    ["https://nas.local/acme/shop", "local", null],
    ["https://router.home.arpa/acme/shop", "local", null],
    // never, whatever the setting
    ["http://169.254.169.254/latest/meta-data", "forbidden", "forbidden"],
    ["https://169.254.169.254/latest/meta-data", "forbidden", "forbidden"],
    ["https://2852039166/latest/meta-data", "forbidden", "forbidden"], // decimal 169.254.169.254
    ["https://0xa9fea9fe/latest/meta-data", "forbidden", "forbidden"],
    ["https://[::ffff:169.254.169.254]/latest", "forbidden", "forbidden"],
    ["https://[::ffff:a9fe:a9fe]/latest", "forbidden", "forbidden"],
    ["https://[64:ff9b::169.254.169.254]/latest", "forbidden", "forbidden"],
    ["https://[2002:a9fe:a9fe::]/latest", "forbidden", "forbidden"],
    ["https://[fe80::1]/latest", "forbidden", "forbidden"],
    ["https://[febf::1]/latest", "forbidden", "forbidden"],
    ["https://[fd00:ec2::254]/latest", "forbidden", "forbidden"],
    ["https://100.100.100.200/latest", "forbidden", "forbidden"],
    ["https://168.63.129.16/machine", "forbidden", "forbidden"],
    ["http://metadata.google.internal/computeMetadata/v1/", "forbidden", "forbidden"],
    ["https://METADATA.google.internal./computeMetadata/v1/", "forbidden", "forbidden"],
    ["https://metadata/computeMetadata/v1/", "forbidden", "forbidden"],
    ["https://metadata.goog/computeMetadata/v1/", "forbidden", "forbidden"],
    ["https://instance-data.ec2.internal/latest", "forbidden", "forbidden"],
    ["https://0.0.0.0/acme/shop", "forbidden", "forbidden"],
    ["https://0/acme/shop", "forbidden", "forbidden"],
    ["https://[::]/acme/shop", "forbidden", "forbidden"],
    ["https://224.0.0.1/acme/shop", "forbidden", "forbidden"],
    ["https://255.255.255.255/acme/shop", "forbidden", "forbidden"],
    ["https://[ff02::1]/acme/shop", "forbidden", "forbidden"],
  ])("%s: off %s, on %s", (url, off, on) => {
    expect(addressRefusal(url, OFF)).toBe(off);
    expect(addressRefusal(url, ON)).toBe(on);
  });
});

describe("classifyHost and parseIpv6", () => {
  it.each<[string, string]>([
    ["example.com", "public"],
    ["1.1.1.1", "public"],
    ["[2001:db8::1]", "local"],
    ["[2606:4700:4700::1111]", "public"],
    ["[not-an-address]", "forbidden"],
    ["999.1.1.1", "forbidden"],
  ])("%s is %s", (host, expected) => {
    expect(classifyHost(host)).toBe(expected);
  });

  it.each<[string, number[] | null]>([
    ["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
    ["fe80::1:2", [0xfe80, 0, 0, 0, 0, 0, 1, 2]],
    ["::ffff:1.2.3.4", [0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]],
    ["1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]],
    ["1:2:3:4:5:6:7", null],
    ["1::2::3", null],
    ["12345::", null],
    ["::ffff:1.2.3.400", null],
  ])("parseIpv6(%s)", (text, words) => {
    expect(parseIpv6(text)).toEqual(words);
  });
});

describe("repositoryProblem under the address rule", () => {
  it.each<[string, boolean | undefined, string | null]>([
    ["https://169.254.169.254/acme/shop", undefined, "Deploys never fetch from link-local, cloud metadata or reserved addresses; use the repository's public https:// address."],
    ["https://metadata.google.internal/acme/shop", true, "Deploys never fetch from link-local, cloud metadata or reserved addresses; use the repository's public https:// address."],
    ["http://127.0.0.1:3900/acme/shop", true, null],
    ["http://127.0.0.1:3900/acme/shop", false, "Deploys fetch from loopback or private addresses only when ALLOW_LOCAL_SOURCES is on; use the repository's public https:// address."],
    ["https://10.1.2.3/acme/shop", false, "Deploys fetch from loopback or private addresses only when ALLOW_LOCAL_SOURCES is on; use the repository's public https:// address."],
    ["https://github.com/acme/shop", false, null],
  ])("%s (local sources %s)", (url, allowLocal, expected) => {
    expect(repositoryProblem(url, allowLocal === undefined ? undefined : { allowLocal })).toBe(expected);
  });
});

describe("decideHop (the redirect rule)", () => {
  const from = "https://git.example.net/acme/shop/archive/main.tar.gz";
  it.each<[string, number, string | null, number, boolean, unknown]>([
    ["a 200 is the archive", 200, null, 0, false, { kind: "body" }],
    ["a redirect to https on a public host is followed", 302, "https://cdn.example.net/a.tar.gz", 0, false, { kind: "follow", url: "https://cdn.example.net/a.tar.gz" }],
    ["a relative Location resolves against the hop", 301, "/other/main.tar.gz", 1, false, { kind: "follow", url: "https://git.example.net/other/main.tar.gz" }],
    ["the fragment of a target is dropped", 307, "https://cdn.example.net/a.tar.gz#x", 0, false, { kind: "follow", url: "https://cdn.example.net/a.tar.gz" }],
    ["the fifth redirect is still followed", 308, "https://cdn.example.net/5", MAX_REDIRECTS - 1, false, { kind: "follow", url: "https://cdn.example.net/5" }],
    ["a sixth is refused", 302, "https://cdn.example.net/6", MAX_REDIRECTS, false, { kind: "refuse", reason: "too_many_redirects" }],
    ["to loopback with local sources off", 302, "http://127.0.0.1:8080/", 0, false, { kind: "refuse", reason: "redirect_refused", refusal: "local" }],
    ["to a decimal loopback", 302, "https://2130706433/", 0, false, { kind: "refuse", reason: "redirect_refused", refusal: "local" }],
    ["to loopback with local sources on", 302, "http://127.0.0.1:8080/x", 0, true, { kind: "follow", url: "http://127.0.0.1:8080/x" }],
    ["to metadata even with local sources on", 302, "http://169.254.169.254/latest/meta-data", 0, true, { kind: "refuse", reason: "redirect_refused", refusal: "forbidden" }],
    ["to a metadata name", 303, "http://metadata.google.internal/", 2, true, { kind: "refuse", reason: "redirect_refused", refusal: "forbidden" }],
    ["a downgrade to http with local sources off", 302, "http://cdn.example.net/a.tar.gz", 0, false, { kind: "refuse", reason: "redirect_refused", refusal: "http" }],
    ["to another scheme", 302, "file:///etc/passwd", 0, true, { kind: "refuse", reason: "redirect_refused", refusal: "not_http" }],
    ["a redirect without Location", 302, null, 0, false, { kind: "refuse", reason: "unavailable" }],
    ["a 404 of the repository's own URL", 404, null, 0, false, { kind: "refuse", reason: "missing" }],
    ["a 404 of a redirect target says nothing of it", 404, null, 1, false, { kind: "refuse", reason: "unavailable" }],
    ["a 401 of the repository's own URL: a private repository or a refused token", 401, null, 0, false, { kind: "refuse", reason: "denied" }],
    ["a 403 of the repository's own URL", 403, null, 0, false, { kind: "refuse", reason: "denied" }],
    ["a 403 of a redirect target says nothing of it", 403, null, 2, false, { kind: "refuse", reason: "unavailable" }],
    ["a 500", 500, null, 0, false, { kind: "refuse", reason: "unavailable" }],
    ["a 304 is no archive", 304, null, 0, false, { kind: "refuse", reason: "unavailable" }],
  ])("%s", (_name, status, location, redirects, allowLocal, expected) => {
    expect(decideHop(from, { status, location }, redirects, { allowLocal })).toEqual(expected);
  });
});

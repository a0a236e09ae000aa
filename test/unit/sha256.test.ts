import { describe, expect, it } from "vitest";
import { toHex } from "../../src/lib/encoding";
import { Sha256 } from "../../src/lib/sha256";

const text = (s: string) => new TextEncoder().encode(s);
const native = async (bytes: Uint8Array) => toHex(await crypto.subtle.digest("SHA-256", bytes));

function random(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i += 65536) crypto.getRandomValues(bytes.subarray(i, Math.min(length, i + 65536)));
  return bytes;
}

describe("Sha256", () => {
  // FIPS 180-4 examples (NIST CSRC "Example Values") and the million-a test.
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    ["abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"],
    ["a".repeat(1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
  ])("hashes the FIPS 180-4 example of %# to its known digest", (input, digest) => {
    expect(new Sha256().update(text(input)).hex()).toBe(digest);
  });

  it("matches Web Crypto on every length around the block and padding edges", async () => {
    const bytes = random(200);
    for (let n = 0; n <= 200; n++) expect(new Sha256().update(bytes.subarray(0, n)).hex()).toBe(await native(bytes.subarray(0, n)));
  });

  it("continues from a written-down state, through JSON, at any cut point, as if never stopped", async () => {
    const bytes = random(3 * 1024 * 1024 + 77);
    const expected = await native(bytes);
    for (const cuts of [[0], [1, 63, 64, 65], [1_000_003, 2_000_000], [4096, 4096 + 13, bytes.length]]) {
      let hash = new Sha256();
      let at = 0;
      for (const cut of cuts) {
        hash.update(bytes.subarray(at, cut));
        hash = new Sha256(JSON.parse(JSON.stringify(hash.state())));
        at = cut;
      }
      expect(hash.update(bytes.subarray(at)).hex()).toBe(expected);
    }
  });

  it("refuses a state that is not one", () => {
    expect(() => new Sha256({ h: [1, 2, 3], length: 0, tail: "" })).toThrow("not a SHA-256 state");
    expect(() => new Sha256({ ...new Sha256().state(), length: 5 })).toThrow("not a SHA-256 state");
  });
});

/**
 * SHA-256 (FIPS 180-4) whose running state can be written down and taken up again: an export's
 * archive is hashed across several queue invocations, and Web Crypto's digest (DigestStream
 * included) cannot hand its state from one invocation to the next.
 *
 * Plain JavaScript on 32-bit integers; the result is checked against Web Crypto's at many cut
 * points in test/unit/sha256.test.ts. About 10x slower than the native digest, which is a few
 * seconds of CPU per gigabyte of archive.
 */
import { fromBase64, toBase64, toHex } from "./encoding";

/** The running state: the chaining words, the bytes hashed so far, and the unprocessed tail (< 64 bytes). */
export interface Sha256State {
  h: number[];
  length: number;
  /** base64 */
  tail: string;
}

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
].map((k) => k | 0));
const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

export class Sha256 {
  readonly #h = new Int32Array(8);
  readonly #w = new Int32Array(64);
  readonly #block = new Uint8Array(64);
  #filled = 0;
  #length = 0;

  constructor(state?: Sha256State) {
    if (!state) {
      this.#h.set(INITIAL);
      return;
    }
    const tail = fromBase64(state.tail);
    if (state.h.length !== 8 || tail.length >= 64 || state.length % 64 !== tail.length % 64) throw new Error("not a SHA-256 state");
    this.#h.set(state.h);
    this.#block.set(tail);
    this.#filled = tail.length;
    this.#length = state.length;
  }

  /** The state after the bytes so far, to continue with `new Sha256(state)`. */
  state(): Sha256State {
    return { h: [...this.#h], length: this.#length, tail: toBase64(this.#block.subarray(0, this.#filled)) };
  }

  update(bytes: Uint8Array): this {
    let offset = 0;
    this.#length += bytes.byteLength;
    if (this.#filled > 0) {
      const take = Math.min(64 - this.#filled, bytes.byteLength);
      this.#block.set(bytes.subarray(0, take), this.#filled);
      this.#filled += take;
      offset = take;
      if (this.#filled < 64) return this;
      compress(this.#h, this.#w, this.#block, 0, 64);
      this.#filled = 0;
    }
    const end = offset + Math.floor((bytes.byteLength - offset) / 64) * 64;
    compress(this.#h, this.#w, bytes, offset, end);
    offset = end;
    this.#block.set(bytes.subarray(offset), 0);
    this.#filled = bytes.byteLength - offset;
    return this;
  }

  /** The digest as lowercase hex; the hash cannot be updated afterwards. */
  hex(): string {
    const bits = this.#length * 8;
    const pad = new Uint8Array((this.#filled < 56 ? 56 : 120) - this.#filled + 8);
    pad[0] = 0x80;
    const view = new DataView(pad.buffer);
    view.setUint32(pad.length - 8, Math.floor(bits / 2 ** 32));
    view.setUint32(pad.length - 4, bits >>> 0);
    this.update(pad);
    const out = new DataView(new ArrayBuffer(32));
    for (let i = 0; i < 8; i++) out.setInt32(i * 4, this.#h[i]!);
    return toHex(out.buffer);
  }
}

/**
 * The 64-byte blocks of `bytes` from `offset` up to `end` into the chaining words `h`: one call per
 * run of blocks, the chaining words held in locals throughout (a plain function: V8 optimises it
 * best). Called once per block, it left about 50 bytes of boxed numbers per block on the heap
 * (74 MB over a 200 MB export, `scripts/bench/profile-allocations.ts`).
 */
function compress(h: Int32Array, w: Int32Array, bytes: Uint8Array, offset: number, end: number): void {
  let h0 = h[0]!, h1 = h[1]!, h2 = h[2]!, h3 = h[3]!, h4 = h[4]!, h5 = h[5]!, h6 = h[6]!, h7 = h[7]!;
  for (; offset < end; offset += 64) {
    for (let i = 0; i < 16; i++) {
      const j = offset + i * 4;
      w[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, k = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + S1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + k) | 0;
  }
  h[0] = h0;
  h[1] = h1;
  h[2] = h2;
  h[3] = h3;
  h[4] = h4;
  h[5] = h5;
  h[6] = h6;
  h[7] = h7;
}

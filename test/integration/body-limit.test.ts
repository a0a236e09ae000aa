import { exports as workerExports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CONSOLE_BODY_BYTES } from "../../src/http/body-limit";
import { ConsoleClient, ORIGIN, signedUp, uniqueEmail } from "./helpers";

// Issue 16: request bodies are bounded on every console route, before any guard reads them.

const envelope = { success: false, error: expect.any(String), code: "PAYLOAD_TOO_LARGE" };

/** A body of `bytes` streamed without Content-Length, as a chunked upload arrives. */
function streamed(bytes: number, text = "a"): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(text.repeat(64 * 1024));
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      controller.enqueue(chunk);
      sent += chunk.byteLength;
    },
  });
}

describe("console body limit", () => {
  it("answers 413 PAYLOAD_TOO_LARGE for an oversized JSON sign-up", async () => {
    const res = await new ConsoleClient().call("POST", "/console/api/signup", { email: uniqueEmail(), password: "x".repeat(CONSOLE_BODY_BYTES) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(envelope);
  });

  it("bounds a streamed form before the CSRF guard would parse it (Origin: null, no session)", async () => {
    const res = await workerExports.default.fetch(
      new Request(`${ORIGIN}/console/databases`, {
        method: "POST",
        headers: { Origin: "null", "Content-Type": "application/x-www-form-urlencoded" },
        body: streamed(4 * 1024 * 1024, "_csrf=x&"),
        duplex: "half",
      } as RequestInit),
    );
    expect(res.status).toBe(413);
  });

  it("bounds a signed-in page form as well, and answers it with a page", async () => {
    const client = await signedUp();
    const big = await client.fetcher.fetch(
      new Request(`${ORIGIN}/console/profile/tokens`, {
        method: "POST",
        headers: { Origin: ORIGIN, Cookie: client.cookie, "Content-Type": "application/x-www-form-urlencoded" },
        body: `name=${"n".repeat(CONSOLE_BODY_BYTES)}`,
      }),
    );
    expect(big.status).toBe(413);
    expect(big.headers.get("Content-Type")).toMatch(/^text\/html/);
  });

  it("lets a SQL body larger than the general limit through", async () => {
    const client = await signedUp();
    const { id } = await client.json("POST", "/console/api/databases", { name: "big" });
    const sql = `SELECT '${"x".repeat(CONSOLE_BODY_BYTES)}' AS v;`;
    const res = await client.call("POST", `/console/api/databases/${id}/sql`, { sql });
    expect(res.status).toBe(200);
  });
});

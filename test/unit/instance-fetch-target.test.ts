/**
 * A request passed to an instance through the node proxy (README "Deploying"): the target's URL,
 * `X-Instance-Port` and the Access token are set by the Worker alone; a client's own copies of
 * those headers (trying to pick another port of the machine, or to pass its own token) are dropped,
 * in direct mode too.
 */
import { describe, expect, it } from "vitest";
import { fetchInstance } from "../../src/routing/instance-fetch";

function recorder() {
  const seen: { url: string; headers: Headers }[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    seen.push({ url: String(input), headers: new Headers(init?.headers) });
    return new Response("ok");
  };
  return { seen, fetcher };
}

const hostile = {
  "X-Instance-Port": "22",
  "CF-Access-Client-Id": "client-forged-id",
  "CF-Access-Client-Secret": "client-forged-secret",
  "Cf-Access-Jwt-Assertion": "forged.jwt",
};

describe("fetchInstance with a target", () => {
  it("through the node proxy: the node's URL with the path, the instance's port and the Worker's token, never the client's", async () => {
    const { seen, fetcher } = recorder();
    const req = new Request("https://shop.apps.example.net/cart?x=1", { headers: hostile });
    const target = { url: "https://node2.example.net", headers: { "X-Instance-Port": "20001", "CF-Access-Client-Id": "worker-id", "CF-Access-Client-Secret": "worker-secret" } };
    const res = await fetchInstance(req, "shop.apps.example.net", target, 5000, fetcher);
    expect(await res.text()).toBe("ok");
    expect(seen[0]!.url).toBe("https://node2.example.net/cart?x=1");
    expect(seen[0]!.headers.get("x-instance-port")).toBe("20001");
    expect(seen[0]!.headers.get("cf-access-client-id")).toBe("worker-id");
    expect(seen[0]!.headers.get("cf-access-client-secret")).toBe("worker-secret");
    expect(seen[0]!.headers.get("cf-access-jwt-assertion")).toBeNull();
  });

  it("directly: none of those headers reaches the instance", async () => {
    const { seen, fetcher } = recorder();
    const req = new Request("https://shop.apps.example.net/", { headers: hostile });
    await fetchInstance(req, "shop.apps.example.net", { url: "http://10.0.0.12:20001", headers: {} }, 5000, fetcher);
    expect(seen[0]!.url).toBe("http://10.0.0.12:20001/");
    for (const name of Object.keys(hostile)) expect(seen[0]!.headers.get(name)).toBeNull();
  });
});

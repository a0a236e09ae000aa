import { exports as workerExports } from "cloudflare:workers";
import { ORIGIN, creditAccount, uniqueEmail } from "./helpers";

/**
 * A browser-like client for the console's HTML pages: keeps every cookie it is given, posts
 * urlencoded forms with our own Origin (as browsers do), and does not follow redirects so tests
 * can look at them.
 */
export class PageClient {
  cookies = new Map<string, string>();

  async request(method: string, path: string, init: { form?: Record<string, string>; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { Origin: ORIGIN, "Accept-Language": "en-GB", ...init.headers };
    // GETs carry no Origin, as in browsers; a test passes Origin "" to send none on a POST.
    if (method === "GET" || headers.Origin === "") delete headers.Origin;
    if (this.cookies.size > 0) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    if (init.form) headers["Content-Type"] = "application/x-www-form-urlencoded";
    const res = await workerExports.default.fetch(
      new Request(ORIGIN + path, { method, headers, body: init.form ? new URLSearchParams(init.form).toString() : undefined, redirect: "manual" }),
    );
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const expired = attrs.some((a) => /max-age=0\b/i.test(a.trim()) || /expires=Thu, 01 Jan 1970/i.test(a.trim()));
      if (value === "" || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request("GET", path, { headers });
  }

  post(path: string, form: Record<string, string>, headers?: Record<string, string>) {
    return this.request("POST", path, { form, headers });
  }

  /** GET a page and return its HTML, failing on anything but 200. */
  async page(path: string): Promise<string> {
    const res = await this.get(path);
    if (res.status !== 200) throw new Error(`GET ${path} -> ${res.status} ${res.headers.get("Location") ?? ""}`);
    return res.text();
  }
}

/** A client signed up through the sign-up form, its wallet credited with `credit` DA when given. */
export async function signedUpPage(email = uniqueEmail(), options: { credit?: number } = {}): Promise<PageClient> {
  const client = new PageClient();
  const res = await client.post("/console/signup", { email, password: "correct horse battery" });
  if (res.status !== 303) throw new Error(`signup -> ${res.status}`);
  if (options.credit) await creditAccount(email, options.credit);
  return client;
}

/** The `value` of the input with this id. */
export function inputValue(html: string, id: string): string | undefined {
  const tag = new RegExp(`<input[^>]*id="${id}"[^>]*>`).exec(html)?.[0];
  return tag ? /value="([^"]*)"/.exec(tag)?.[1] : undefined;
}

/** The text of the error paragraph under the field `name`. */
export function fieldError(html: string, name: string): string | undefined {
  return new RegExp(`<p class="field-error" id="f-${name}-error">([^<]*)</p>`).exec(html)?.[1];
}

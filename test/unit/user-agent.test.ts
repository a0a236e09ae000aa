import { describe, expect, it } from "vitest";
import { browserLabel } from "../../src/console/pages/user-agent";

describe("browserLabel: the sessions list names the browser", () => {
  it.each([
    ["Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome 131 on Linux"],
    ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15", "Safari 17 on macOS"],
    ["Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", "Firefox 133 on Windows"],
    ["Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "Safari 17 on iOS"],
    ["curl/8.5.0", "curl/8.5.0"],
    ["", "Unknown browser"],
    [null, "Unknown browser"],
  ])("%s -> %s", (userAgent, label) => {
    expect(browserLabel(userAgent)).toBe(label);
  });
});

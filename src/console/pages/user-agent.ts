import Bowser from "bowser";

/**
 * The browser and system a session signed in from, in words (`Chrome 131 on Linux`), read from
 * its user agent with bowser; the raw text when bowser knows neither, "Unknown browser" when
 * there was none.
 */
export function browserLabel(userAgent: string | null): string {
  if (!userAgent) return "Unknown browser";
  const { browser, os } = Bowser.parse(userAgent);
  if (!browser.name && !os.name) return userAgent.slice(0, 80);
  const major = browser.version?.split(".")[0];
  const name = browser.name ? `${browser.name}${major ? ` ${major}` : ""}` : "Unknown browser";
  return os.name ? `${name} on ${os.name}` : name;
}

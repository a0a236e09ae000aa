import { forgeOf } from "./forge";

/**
 * The header carrying `token` on a request to `url`, or null: only when `url` is on the same
 * origin (scheme, host and port) as the first archive URL `origin`, the forge's own API; a
 * redirect elsewhere (GitHub's codeload, a CDN, anything a forge points at) never gets it.
 * GitHub reads `Authorization: Bearer`, GitLab `PRIVATE-TOKEN`, Gitea and Forgejo
 * `Authorization: token`.
 */
export function tokenHeader(repository: string, origin: string, url: string, token: string | null): [string, string] | null {
  if (token === null) return null;
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return null;
  }
  if (target.origin !== origin) return null;
  switch (forgeOf(repository)) {
    case "github":
      return ["Authorization", `Bearer ${token}`];
    case "gitlab":
      return ["PRIVATE-TOKEN", token];
    case "gitea":
      return ["Authorization", `token ${token}`];
  }
}

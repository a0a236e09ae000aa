// The passkey script's source (browser JavaScript), bundled with @simplewebauthn/browser by
// scripts/build-passkey-script.ts into passkeys-bundle.ts and served as /console/assets/passkeys.js.
import { browserSupportsWebAuthn, startAuthentication, startRegistration } from "@simplewebauthn/browser";

const API = "/console/api/passkeys";

async function post(path, body, csrf) {
  const headers = { "Content-Type": "application/json" };
  if (csrf) headers["X-CSRF-Token"] = csrf;
  const res = await fetch(API + path, { method: "POST", headers, body: JSON.stringify(body ?? {}), credentials: "same-origin" });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || "The request failed (" + res.status + ").");
  return data;
}

function say(text) {
  const status = document.getElementById("passkey-status");
  if (status) status.textContent = text;
}

/** A cancelled or timed-out browser prompt reads as such, not as an error of ours. */
function problem(err) {
  if (err && err.name === "NotAllowedError") return "The passkey prompt was closed or timed out. Nothing changed.";
  return (err && err.message) || "Something went wrong.";
}

function setUpAdd(form) {
  form.hidden = false;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const csrf = form.getAttribute("data-csrf");
    const name = form.elements.namedItem("name").value.trim();
    if (!name) return say("Give the passkey a name.");
    say("Follow your browser's prompt to create the passkey…");
    try {
      const optionsJSON = await post("/register/options", {}, csrf);
      const response = await startRegistration({ optionsJSON });
      await post("/register", { name, response }, csrf);
      window.location.assign("/console/profile");
    } catch (err) {
      say(problem(err));
    }
  });
}

function setUpSignIn(box) {
  box.hidden = false;
  box.querySelector("button").addEventListener("click", async () => {
    say("Follow your browser's prompt to use your passkey…");
    try {
      const optionsJSON = await post("/signin/options");
      const response = await startAuthentication({ optionsJSON });
      await post("/signin", { response });
      window.location.assign(box.getAttribute("data-next") || "/console");
    } catch (err) {
      say(problem(err));
    }
  });
}

if (browserSupportsWebAuthn()) {
  const form = document.getElementById("passkey-add");
  if (form) setUpAdd(form);
  const box = document.getElementById("passkey-signin");
  if (box) setUpSignIn(box);
}

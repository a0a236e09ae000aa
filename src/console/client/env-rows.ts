/**
 * The Environment section: Add variable adds an empty row in place instead of a round trip, so
 * what was typed in the other rows stays as it is.
 */
export function envRows(): void {
  const form = document.querySelector<HTMLFormElement>("form.env-rows");
  if (!form) return;
  const count = form.querySelector<HTMLInputElement>("input[name=rows]");
  const add = form.querySelector<HTMLButtonElement>("button[name=action][value=add]");
  if (!count || !add || form.querySelectorAll("fieldset.env-row").length === 0) return;
  add.addEventListener("click", (event) => {
    event.preventDefault();
    const all = form.querySelectorAll<HTMLFieldSetElement>("fieldset.env-row");
    const last = all[all.length - 1]!;
    const n = Number(count.value);
    const row = last.cloneNode(true) as HTMLFieldSetElement;
    row.setAttribute("data-env-row", String(n));
    row.querySelector("legend")!.textContent = `Variable ${n + 1}`;
    row.querySelectorAll(".env-row-errors").forEach((el) => el.remove());
    row.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLLabelElement>("input, textarea, label[for]").forEach((el) => {
      for (const attr of ["id", "for", "name"]) {
        const value = el.getAttribute(attr);
        if (value) el.setAttribute(attr, value.replace(/[0-9]+$/, String(n)));
      }
      el.removeAttribute("aria-invalid");
      el.removeAttribute("aria-describedby");
      if (el instanceof HTMLInputElement && el.type === "checkbox") el.checked = false;
      else if (!(el instanceof HTMLLabelElement)) el.value = "";
    });
    last.after(row);
    count.value = String(n + 1);
    row.querySelector<HTMLInputElement>("input[type=text]")!.focus();
  });
}

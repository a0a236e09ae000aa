/** Copy buttons next to read-only fields (hidden without script): the field's text to the clipboard. */
export function copyButtons(root: ParentNode): void {
  root.querySelectorAll<HTMLButtonElement>("button[data-copy]").forEach((button) => {
    const source = document.getElementById(button.getAttribute("data-copy") ?? "") as HTMLInputElement | HTMLTextAreaElement | null;
    if (!source) return;
    source.addEventListener("focus", () => source.select());
    button.hidden = false;
    button.addEventListener("click", () => {
      const done = () => {
        button.textContent = "Copied";
        setTimeout(() => {
          button.textContent = "Copy";
        }, 2000);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(source.value).then(done, () => source.select());
      } else {
        source.select();
        if (document.execCommand("copy")) done();
      }
    });
  });
}

// A short notice that outlives the page that raised it ("Login succeeded!"
// shown while the app moves to the next page). Plain DOM in a live region,
// so it needs no provider in the shell.
const HOST_ID = "exhub-toasts";
export const TOAST_MS = 3000;

export function showToast(text: string, kind: "success" | "error" = "success"): void {
  if (typeof document === "undefined") return;
  let host = document.getElementById(HOST_ID);
  if (!host) {
    host = document.createElement("div");
    host.id = HOST_ID;
    host.className = "toasts";
    host.setAttribute("role", "status");
    host.setAttribute("aria-live", "polite");
    document.body.appendChild(host);
  }
  const el = document.createElement("div");
  el.className = `toast toast--${kind}`;
  el.textContent = text;
  host.appendChild(el);
  setTimeout(() => el.remove(), TOAST_MS);
}

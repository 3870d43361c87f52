// Where to go after signing in: the `return_to` of the URL when it is a path
// of this site, else home. Absolute URLs of another origin, protocol-relative
// `//host` forms, backslash tricks and non-http schemes are refused, so the
// login page can never send anyone to another site.
export function safeReturnTo(raw: string | null | undefined, origin: string = window.location.origin): string {
  if (!raw) return "/";
  const value = raw.trim();
  if (value === "" || /[\u0000-\u001f\\]/.test(value)) return "/";
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return "/";
  }
  if (url.origin !== origin || (url.protocol !== "http:" && url.protocol !== "https:")) return "/";
  // Relative input must be a rooted path, not "//host" or "javascript:".
  if (!/^https?:\/\//i.test(value) && !(value.startsWith("/") && !value.startsWith("//"))) return "/";
  const path = `${url.pathname}${url.search}${url.hash}`;
  // Back to a sign-in page would loop.
  if (/^\/(login|otpauth|regist)(\/|$|\?)/.test(url.pathname)) return "/";
  return path;
}

// /login with the page to come back to.
export function loginPath(returnTo: string): string {
  return returnTo && returnTo !== "/" ? `/login?return_to=${encodeURIComponent(returnTo)}` : "/login";
}

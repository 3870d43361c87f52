import { Outlet, redirect } from "react-router";
import { loginPath } from "~/features/auth/return-to";
import { loadMe } from "~/lib/session";

// Pages behind a login. The BFF says who is signed in (GET /api/v1/me):
// without a session the user goes to /login, with a password-only session of
// a member who has 2FA to the second factor, and either comes back here after.
export async function clientLoader({ request }: { request: Request }) {
  const url = new URL(request.url);
  const here = `${url.pathname}${url.search}`;
  const me = await loadMe();
  if (me.status === "anonymous") throw redirect(loginPath(here));
  if (me.status === "aal2_required") throw redirect(`/otpauth?return_to=${encodeURIComponent(here)}`);
  if (me.status === "error") throw me.error;
  return null;
}

export default function Protected() {
  return <Outlet />;
}

import { Outlet, redirect } from "react-router";
import { hasSession } from "~/lib/session";

// Pages behind a login: without a stored session token the user goes to /login.
export function clientLoader() {
  if (!hasSession()) throw redirect("/login");
  return null;
}

export default function Protected() {
  return <Outlet />;
}

import { useEffect, useState } from "react";
import { useLocation, useNavigate } from "react-router";
import { submitFlow, type FlowResult } from "~/features/auth/kratos";
import { useFlow } from "~/features/auth/useFlow";

// Kratos' settings flow for the dashboard (Profile and Security share it).
// Without a session the member goes to /login, when the second factor is due
// to /otpauth, and when the privileged window (15 minutes after sign-in) has
// passed to Kratos' re-authentication; each comes back here afterwards.
export function useSettingsFlow() {
  const flow = useFlow("settings");
  const { state, show, recover } = flow;
  const navigate = useNavigate();
  const { pathname, search } = useLocation();
  const here = `${pathname}${search}`;
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (state.status !== "failed") return;
    const r = state.result;
    const back = encodeURIComponent(here);
    if (r.kind === "aal2_required")
      void navigate(`/otpauth?return_to=${back}`, { replace: true });
    else if (
      r.kind === "error" &&
      (r.status === 401 || r.id === "session_inactive")
    )
      void navigate(`/login?return_to=${back}`, { replace: true });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [state]);

  // Submits the flow; the answer's next flow is shown (on success only when
  // opts.show is not false: the caller then shows r.flow itself once its
  // own next step is done). Returns the result for the caller to report, or
  // null when the page moves on.
  const submit = async (
    body: Record<string, unknown>,
    opts: { show?: boolean } = {},
  ): Promise<FlowResult | null> => {
    if (state.status !== "ready") return null;
    setBusy(true);
    try {
      const r = await submitFlow("settings", state.flow.id, body);
      if (r.kind === "success") {
        if (r.flow && opts.show !== false) show(r.flow);
        return r;
      }
      if (r.kind === "aal2_required") {
        await navigate(`/otpauth?return_to=${encodeURIComponent(here)}`);
        return null;
      }
      if (r.kind === "redirect") {
        // session_refresh_required: Kratos' login asks for the password again, then returns here.
        window.location.assign(r.to);
        return null;
      }
      // An expired flow or a CSRF mismatch starts a new one; a flow with messages is shown.
      await recover(r);
      return r;
    } finally {
      setBusy(false);
    }
  };

  return { ...flow, submit, busy };
}

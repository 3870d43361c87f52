import { Trans, useLingui } from "@lingui/react/macro";
import { useEffect, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { AuthLayout, Loading } from "./AuthLayout";
import { getFlowError } from "./kratos";
import { useErrorIdText } from "./messages";

// Kratos' error page (/error?id=): the error, translated by its id.
export function ErrorScreen() {
  const { t } = useLingui();
  const [params] = useSearchParams();
  const id = params.get("id");
  const text = useErrorIdText();
  const [err, setErr] = useState<{ id?: string; message?: string } | null | undefined>(id ? undefined : null);
  useEffect(() => {
    if (!id) return;
    let live = true;
    void getFlowError(id).then((e) => live && setErr(e));
    return () => {
      live = false;
    };
  }, [id]);
  return (
    <AuthLayout title={t`Error`} testId="auth-error">
      {err === undefined ? <Loading /> : <p role="alert" data-error-id={err?.id}>{text(err?.id)}</p>}
      <div className="auth-links">
        <Link to="/login">
          <Trans>Back to Log In</Trans>
        </Link>
        <Link to="/">
          <Trans>Back to home</Trans>
        </Link>
      </div>
    </AuthLayout>
  );
}

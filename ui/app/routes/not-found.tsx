import { Trans, useLingui } from "@lingui/react/macro";
import { Link } from "react-router";
import { PageTitle } from "~/components/PageTitle";

export default function NotFound() {
  const { t } = useLingui();
  return (
    <div className="page">
      <PageTitle page={t`Page not found`} />
      <h1>{t`Page not found`}</h1>
      <p>
        <Trans>The page you are looking for does not exist.</Trans>
      </p>
      <p>
        <Link to="/" className="button">
          <Trans>Back to home</Trans>
        </Link>
      </p>
    </div>
  );
}

import { useLingui } from "@lingui/react/macro";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { Link } from "react-router";
import { queryClient } from "~/api/queries";
import { tradingQueries } from "~/api/trading";

// Where the operator gates trading on an exchange behind two-factor
// authentication or a verified KYC (GET /api/v1/service-gates), the order
// form is replaced by the reason and a link to the page that fixes it. Until
// the gates are known, or when they cannot be read, the form shows (the BFF
// refuses a gated order anyway, with the same reason).
export function TradingGate({ exchange, name, children }: { exchange: string; name: string; children: ReactNode }) {
  const { t } = useLingui();
  const q = useQuery(tradingQueries.serviceGates(exchange), queryClient);
  const trading = q.data?.find((g) => g.service === "trading");
  if (!trading?.code) return <>{children}</>;
  const missing = trading.missing.length > 0 ? trading.missing : [trading.code === "kyc_required" ? "kyc" : "two_factor"];
  return (
    <div className="notice trade-gate" data-testid="trading-gate" data-code={trading.code} role="status">
      {missing.includes("two_factor") ? (
        <p>
          {t`Trading on ${name} needs two-factor authentication.`}{" "}
          <Link to="/dashboard?page=security" className="button button--small" data-testid="gate-security">
            {t`Turn on Google Authenticator`}
          </Link>
        </p>
      ) : null}
      {missing.includes("kyc") ? (
        <p>
          {t`Trading on ${name} needs a verified identity (KYC).`}{" "}
          <Link to="/dashboard?page=profile" className="button button--small" data-testid="gate-kyc">
            {t`Verify your identity`}
          </Link>
        </p>
      ) : null}
    </div>
  );
}

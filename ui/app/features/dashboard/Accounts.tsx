import { Trans, useLingui } from "@lingui/react/macro";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useMemo, useState } from "react";
import { useFormContext, useWatch, type UseFormReturn } from "react-hook-form";
import { z } from "zod";
import {
  accountsApi,
  accountsChangedKeys,
  accountsQueries,
  needsPassphrase,
  type ExchangeAccount,
  type LinkAccount,
} from "~/api/accounts";
import type { Exchange } from "~/api/client";
import { displayState, logoSrc } from "~/api/exchange-state";
import { Field, Form, FormError, SubmitButton, TextField, useZodForm } from "~/components/form";
import { Alert, Loading } from "~/features/auth/AuthLayout";
import { showToast } from "~/features/auth/toast";
import { errorText, isApiError } from "~/lib/errors";
import { useExchanges } from "~/lib/exchanges";

// Exchange accounts (/dashboard?page=accounts): the member's accounts per
// exchange (broker accounts exhub made, linked API keys), linking an API key
// and unlinking one.

const ConfirmDialog = lazy(() => import("~/components/ui/Dialog").then((m) => ({ default: m.ConfirmDialog })));

// Printable ASCII without spaces, as the API takes keys.
const KEY_CHARS = /^[\x21-\x7e]+$/;

type LinkValues = {
  exchange: string;
  name: string;
  api_key: string;
  api_secret: string;
  passphrase: string;
};

const EMPTY: LinkValues = { exchange: "", name: "", api_key: "", api_secret: "", passphrase: "" };
const SECRET_FIELDS = ["api_key", "api_secret", "passphrase"] as const;

function useLinkSchema() {
  const { t, i18n } = useLingui();
  return useMemo(() => {
    const key = (max: number) =>
      z
        .string()
        .min(1, "required")
        .max(max, t`At most ${max} characters.`)
        .regex(KEY_CHARS, t`Use the characters of the key as the exchange shows them, without spaces.`);
    return z
      .object({
        exchange: z.string().min(1, t`Choose an exchange.`),
        name: z.string().trim().max(64, t`At most 64 characters.`),
        api_key: key(256),
        api_secret: key(512),
        passphrase: z.string().max(128, t`At most 128 characters.`),
      })
      .superRefine((v, ctx) => {
        if (!needsPassphrase(v.exchange)) return;
        if (v.passphrase === "") ctx.addIssue({ code: "custom", path: ["passphrase"], message: "required" });
        else if (!KEY_CHARS.test(v.passphrase))
          ctx.addIssue({
            code: "custom",
            path: ["passphrase"],
            message: t`Use the characters of the passphrase as you set it, without spaces.`,
          });
      });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [i18n.locale]);
}

// Where a refusal of POST /api/v1/accounts goes: a field of the form (its
// message translated), else the form's own error.
export function linkRefusal(
  e: unknown,
  t: {
    credentials: string;
    withdraw: string;
    exists: string;
    unknown: string;
    invalid: string;
    unavailable: string;
    noAccounts: string;
    network: string;
  },
): { field: keyof LinkValues | "root"; message: string } {
  if (!isApiError(e)) return { field: "root", message: t.network };
  switch (e.code) {
    case "credentials_refused":
      return { field: "api_key", message: e.problem.detail ? `${t.credentials} (${e.problem.detail})` : t.credentials };
    case "withdraw_permission":
      return { field: "api_key", message: t.withdraw };
    case "account_exists":
      return { field: "exchange", message: t.exists };
    case "unknown_exchange":
      return { field: "exchange", message: t.unknown };
    case "invalid": {
      const at = e.problem.errors[0]?.location?.split(".").pop() ?? "";
      const field = (Object.keys(EMPTY) as (keyof LinkValues)[]).find((f) => f === at);
      return field ? { field, message: t.invalid } : { field: "root", message: t.invalid };
    }
    case "exchange_unavailable":
      return { field: "root", message: t.unavailable };
    case "accounts_unavailable":
      return { field: "root", message: t.noAccounts };
    default:
      return { field: "root", message: errorText(e, t.network) };
  }
}

function ExchangeName({ slug, exchanges }: { slug: string; exchanges: Exchange[] | null }) {
  const ex = exchanges?.find((x) => x.slug === slug);
  const src = ex ? logoSrc(ex.logoSvg) : null;
  return (
    <span className="dash-exchange">
      {src ? <img src={src} alt="" width={20} height={20} /> : null}
      <span>{ex?.name ?? slug}</span>
    </span>
  );
}

function StatusBadge({ a }: { a: ExchangeAccount }) {
  const { t } = useLingui();
  const label = { provisioning: t`Being set up`, active: t`Active`, failed: t`Failed` }[a.status];
  const cls = { provisioning: "in_review", active: "ok", failed: "declined" }[a.status];
  return (
    <span className={`dash-badge dash-badge--${cls}`} data-testid={`account-status-${a.exchange}`}>
      {label}
    </span>
  );
}

function AccountRow({
  a,
  exchanges,
  onUnlink,
}: {
  a: ExchangeAccount;
  exchanges: Exchange[] | null;
  onUnlink: (a: ExchangeAccount) => void;
}) {
  const { t, i18n } = useLingui();
  const created = new Date(a.created_at);
  return (
    <li className="dash-card dash-account" data-testid={`account-${a.exchange}`}>
      <div className="dash-account-head">
        <h3>
          <ExchangeName slug={a.exchange} exchanges={exchanges} />
        </h3>
        <StatusBadge a={a} />
      </div>
      <dl className="dash-fields">
        <div className="dash-field">
          <dt>
            <Trans>Name</Trans>
          </dt>
          <dd>{a.name}</dd>
        </div>
        <div className="dash-field">
          <dt>
            <Trans>Kind</Trans>
          </dt>
          <dd data-testid={`account-mode-${a.exchange}`}>
            {a.mode === "broker" ? t`Broker account (managed by exhub)` : t`Linked API key`}
          </dd>
        </div>
        {a.key_last4 ? (
          <div className="dash-field">
            <dt>
              <Trans>API key</Trans>
            </dt>
            <dd className="dash-value" data-testid={`account-key-${a.exchange}`}>
              ••••{a.key_last4}
            </dd>
          </div>
        ) : null}
        <div className="dash-field">
          <dt>
            <Trans>Created</Trans>
          </dt>
          <dd>
            {Number.isFinite(created.getTime())
              ? new Intl.DateTimeFormat(i18n.locale, { dateStyle: "medium", timeStyle: "short" }).format(created)
              : ""}
          </dd>
        </div>
      </dl>
      {a.status === "failed" && a.status_reason ? (
        <p className="dash-notice" data-testid={`account-reason-${a.exchange}`}>
          {a.status_reason}
        </p>
      ) : null}
      {a.mode === "linked" ? (
        <button type="button" className="button" onClick={() => onUnlink(a)} data-testid={`unlink-${a.exchange}`}>
          <Trans>Unlink</Trans>
        </button>
      ) : (
        <p className="dash-muted">
          <Trans>This account is managed by exhub and cannot be unlinked.</Trans>
        </p>
      )}
    </li>
  );
}

function PassphraseField() {
  const { control } = useFormContext<LinkValues>();
  const exchange = useWatch({ control, name: "exchange" });
  if (!needsPassphrase(exchange)) return null;
  return (
    <TextField
      name="passphrase"
      label={<Trans>Passphrase</Trans>}
      type="password"
      autoComplete="off"
      spellCheck={false}
      maxLength={128}
      required
    />
  );
}

function LinkForm({ choices, exchanges }: { choices: string[]; exchanges: Exchange[] | null }) {
  const { t } = useLingui();
  const qc = useQueryClient();
  const schema = useLinkSchema();
  const form = useZodForm(schema, { defaultValues: { ...EMPTY, exchange: choices[0] ?? "" } });
  const texts = {
    credentials: t`The exchange refused this API key. It must be valid and allowed to read and trade.`,
    withdraw: t`This API key may withdraw funds. Create a key without withdrawal permission.`,
    exists: t`You already have an account on this exchange.`,
    unknown: t`This exchange is not available.`,
    invalid: t`This value is not accepted.`,
    unavailable: t`The exchange cannot be reached right now. Try again in a moment.`,
    noAccounts: t`Linking API keys is not available on this server.`,
    network: t`Network anomaly`,
  };
  const submit = async (v: LinkValues) => {
    const body: LinkAccount = { exchange: v.exchange, api_key: v.api_key, api_secret: v.api_secret };
    if (v.name.trim() !== "") body.name = v.name.trim();
    if (needsPassphrase(v.exchange)) body.passphrase = v.passphrase;
    // The key, secret and passphrase leave the form's state whatever the answer.
    const clear = (f: UseFormReturn<LinkValues, unknown, LinkValues>) => {
      for (const name of SECRET_FIELDS) f.setValue(name, "", { shouldValidate: false, shouldDirty: false });
    };
    try {
      await accountsApi.link(body);
    } catch (e) {
      clear(form);
      const r = linkRefusal(e, texts);
      if (r.field === "root") form.setError("root.server", { type: "server", message: r.message });
      else form.setError(r.field, { type: "server", message: r.message }, { shouldFocus: true });
      return;
    }
    form.reset({ ...EMPTY, exchange: "" });
    showToast(t`API key linked`);
    await Promise.all(accountsChangedKeys.map((queryKey) => qc.invalidateQueries({ queryKey })));
  };
  return (
    <Form form={form} onSubmit={submit} data-testid="link-form" aria-label={t`Link an API key`}>
      <Field name="exchange" label={<Trans>Exchange</Trans>} required>
        {(control) => (
          <select className="input" {...control} {...form.register("exchange")} data-testid="link-exchange">
            {choices.map((slug) => (
              <option key={slug} value={slug}>
                {exchanges?.find((x) => x.slug === slug)?.name ?? slug}
              </option>
            ))}
          </select>
        )}
      </Field>
      <TextField name="name" label={<Trans>Name (optional)</Trans>} maxLength={64} autoComplete="off" />
      <TextField
        name="api_key"
        label={<Trans>API key</Trans>}
        type="password"
        autoComplete="off"
        spellCheck={false}
        maxLength={256}
        required
      />
      <TextField
        name="api_secret"
        label={<Trans>Secret key</Trans>}
        type="password"
        autoComplete="off"
        spellCheck={false}
        maxLength={512}
        required
      />
      <PassphraseField />
      <p className="dash-muted" data-testid="withdraw-note">
        <Trans>
          Keys that can withdraw funds are refused: give the key read and trade permissions only.
        </Trans>
      </p>
      <FormError />
      <SubmitButton testId="link-submit">
        <Trans>Link an API key</Trans>
      </SubmitButton>
    </Form>
  );
}

export function AccountsPage() {
  const { t } = useLingui();
  const qc = useQueryClient();
  const q = useQuery(accountsQueries.list());
  const exchanges = useExchanges();
  const [unlinking, setUnlinking] = useState<ExchangeAccount | null>(null);
  const accounts = q.data?.accounts ?? [];
  const taken = new Set(accounts.map((a) => a.exchange));
  const choices = (exchanges ?? [])
    .filter((x) => displayState(x) === "available" && !taken.has(x.slug))
    .map((x) => x.slug);
  const unavailable = isApiError(q.error) && q.error.code === "accounts_unavailable";

  const unlink = async (): Promise<boolean> => {
    if (!unlinking) return true;
    try {
      await accountsApi.unlink(unlinking.id);
    } catch (e) {
      // Already gone (another tab): the list is read again below.
      if (!(isApiError(e) && e.status === 404)) return false;
    }
    showToast(t`API key unlinked`);
    await Promise.all(accountsChangedKeys.map((queryKey) => qc.invalidateQueries({ queryKey })));
    return true;
  };

  return (
    <div className="dash-stack" data-testid="accounts">
      <section className="dash-card" aria-labelledby="accounts-title">
        <h2 id="accounts-title">
          <Trans>Exchange accounts</Trans>
        </h2>
        {q.isLoading ? <Loading /> : null}
        {q.isError ? (
          <div data-testid="accounts-error">
            <Alert>
              {unavailable
                ? t`Linking API keys is not available on this server.`
                : errorText(q.error, t`Network anomaly`)}
            </Alert>
            {unavailable ? null : (
              <button type="button" className="button" onClick={() => void q.refetch()}>
                <Trans>Retry</Trans>
              </button>
            )}
          </div>
        ) : null}
        {q.isSuccess && accounts.length === 0 ? (
          <p className="dash-muted" data-testid="accounts-empty">
            <Trans>No exchange account yet. Link an API key to trade on an exchange.</Trans>
          </p>
        ) : null}
        {accounts.length > 0 ? (
          <ul className="dash-accounts" data-testid="account-list">
            {accounts.map((a) => (
              <AccountRow key={a.id} a={a} exchanges={exchanges} onUnlink={setUnlinking} />
            ))}
          </ul>
        ) : null}
      </section>
      {q.isSuccess ? (
        <section className="dash-card" aria-labelledby="link-title">
          <h2 id="link-title">
            <Trans>Link an API key</Trans>
          </h2>
          {choices.length > 0 ? (
            <LinkForm key={choices.join(",")} choices={choices} exchanges={exchanges} />
          ) : (
            <p className="dash-muted" data-testid="link-none">
              {exchanges === null ? t`Loading…` : t`Every available exchange already has an account.`}
            </p>
          )}
        </section>
      ) : null}
      {unlinking ? (
        <Suspense fallback={null}>
          <ConfirmDialog
            isOpen
            onOpenChange={(open) => {
              if (!open) setUnlinking(null);
            }}
            title={t`Unlink this API key?`}
            confirmLabel={t`Unlink`}
            cancelLabel={t`Cancel`}
            onConfirm={unlink}
            errorText={t`The API key could not be unlinked. Try again.`}
          >
            <p>
              {t`exhub stops using the key ending ${unlinking.key_last4} on ${unlinking.exchange}. Open orders on the exchange stay as they are.`}
            </p>
          </ConfirmDialog>
        </Suspense>
      ) : null}
    </div>
  );
}

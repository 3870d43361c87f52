import { useLingui as useLinguiCore } from "@lingui/react";
import { Trans, useLingui } from "@lingui/react/macro";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "react-router";
import { lazy, Suspense, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { useFormContext, type FieldValues, type UseFormReturn } from "react-hook-form";
import { z } from "zod";
import { Field, Form, FormError, SubmitButton, TextField, useZodForm } from "~/components/form";
import { errorText, isApiError } from "~/lib/errors";
import { useMember } from "~/lib/session";
import { walletKeys, walletQueries, type Asset, type Convert, type Transfer, type WalletName, type WalletProblem, type Withdrawal } from "./api";
import { useStartExchange } from "./Deposit";
import { movementsApi, type ConvertQuote, type Movement, type Settings, type Submitted } from "./movements-api";
import {
  CoinSelect,
  ExchangeSelect,
  exchangeName,
  HistorySection,
  rememberCoin,
  Select,
  StatusBadge,
  useAmount,
  useFormatTime,
  useWalletExchanges,
  WalletTable,
  type Column,
} from "./parts";
import { isStale, saveDraft, stepUpPath, useDraft } from "./step-up";
import { amountProblem, amountText, maxAmount, type AmountRules } from "./wallet-math";

// The wallet's movement forms (Withdraw, Convert, Transfer, Exchange, Gift) and the demo faucet, over the money
// movement API (movements-api.ts). A 202 answer is pending: the page says so and never calls it a failure.

const ConfirmDialog = lazy(() => import("~/components/ui/Dialog").then((m) => ({ default: m.ConfirmDialog })));

// --- shared pieces ----------------------------------------------------------------------------------------------

function useAssets(exchange: string): Asset[] {
  return useQuery(walletQueries.assets(exchange)).data?.assets ?? [];
}

// The member's wallet withdrawals and transfers to another exchange are paid from on an exchange (the spot wallet of
// an account exhub opened on Binance, else the funding wallet).
function useWithdrawWallet(exchange: string): WalletName {
  return useQuery(walletQueries.assets(exchange)).data?.withdraw_wallet ?? "funding";
}

// The available balance of a coin in one wallet of an exchange (from the overview), or undefined before it loads.
function useAvailable(exchange: string, wallet: WalletName, coin: string): string | undefined {
  const q = useQuery(walletQueries.overview());
  if (!q.data) return undefined;
  const ex = q.data.exchanges.find((e) => e.exchange === exchange);
  if (!ex || ex.status !== "ok") return undefined;
  const c = ex.wallets.find((w) => w.wallet === wallet)?.coins.find((x) => x.coin === coin);
  return c?.available ?? "0";
}

// After a movement the balances and histories are read again.
function useRefresh() {
  const qc = useQueryClient();
  return () => {
    void qc.invalidateQueries({ queryKey: walletKeys.overview });
    void qc.invalidateQueries({ queryKey: ["wallet", "history"] });
    void qc.invalidateQueries({ queryKey: ["wallet", "movements"] });
  };
}

// The outcome line under a form: done, on its way, or pending (the exchange has not confirmed it yet: never a
// failure).
function Outcome({ result, done, processing }: { result: Submitted | null; done: ReactNode; processing?: ReactNode }) {
  if (!result) return null;
  if (result.outcome === "pending")
    return (
      <p className="wallet-warning" role="status" data-testid="movement-pending">
        <Trans>Pending: the exchange has not confirmed it yet. It shows in the history as soon as it does; nothing needs to be sent again.</Trans>
      </p>
    );
  return (
    <p className="wallet-ok" role="status" data-testid={result.outcome === "done" ? "movement-done" : "movement-processing"}>
      {result.outcome === "done" ? done : (processing ?? done)}
    </p>
  );
}

// An amount field with a Max button; validated with the rules in rulesRef (precision, minimum, balance, fee).
function AmountField({ label, max, description }: { label: ReactNode; max?: string; description?: ReactNode }) {
  const { t } = useLingui();
  const { register, setValue } = useFormContext();
  return (
    <Field name="amount" label={label} description={description} required>
      {(control) => (
        <div className="wallet-amount-row">
          <input className="input" inputMode="decimal" autoComplete="off" {...control} {...register("amount")} data-testid="amount" />
          {max !== undefined && max !== "" ? (
            <button
              type="button"
              className="button"
              onClick={() => setValue("amount", max, { shouldValidate: true, shouldDirty: true })}
              aria-label={t`Use the largest amount`}
            >
              <Trans>Max</Trans>
            </button>
          ) : null}
        </div>
      )}
    </Field>
  );
}

// A zod string that must pass amountProblem against the current rules (read when validating).
function amountSchema(rules: { current: AmountRules }, text: (code: string) => string) {
  return z.string().superRefine((v, ctx) => {
    const p = amountProblem(v, rules.current);
    if (p) ctx.addIssue({ code: "custom", message: text(p) });
  });
}

// A submit's refusal on the form: on the field the problem names (amount, address, memo, ...) when the form has it,
// else the form's own error.
function refusalOn(form: UseFormReturn<FieldValues, unknown, unknown>, e: unknown, fallback: string) {
  if (isApiError(e)) {
    const field = (e.problem as WalletProblem).field;
    const values = form.getValues() as Record<string, unknown>;
    if (field && field in values) {
      form.setError(field, { type: "server", message: e.problem.detail ?? e.problem.title }, { shouldFocus: true });
      return;
    }
  }
  form.setError("root.server", { type: "server", message: errorText(e, fallback) });
}

function Facts({ items }: { items: [ReactNode, ReactNode, string?][] }) {
  return (
    <dl className="wallet-facts">
      {items.map(([k, v, id], i) => (
        <div key={i}>
          <dt>{k}</dt>
          <dd data-testid={id}>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

// A movement's status as a badge: pending and on its way are not failures.
export function MovementStatusBadge({ m }: { m: Movement }) {
  const { t } = useLingui();
  const label: Record<string, string> = {
    pending: t`Pending`,
    processing: t`Processing`,
    in_transit: t`In transit`,
    completed: t`Completed`,
    rejected: t`Rejected`,
    failed: t`Failed`,
  };
  const cls = m.status === "completed" ? "ok" : m.status === "rejected" || m.status === "failed" ? "declined" : "in_review";
  return (
    <span className={`dash-badge dash-badge--${cls}`} title={m.error || undefined} data-status={m.status}>
      {label[m.status] ?? m.status}
    </span>
  );
}

// The member's journal of one kind of movement (exchange transfers, gifts), newest first, older pages by cursor.
function MovementHistory({ kind, title, columns, testId }: { kind: string; title: string; columns: Column<Movement>[]; testId: string }) {
  const { t } = useLingui();
  const q = useInfiniteQuery({
    queryKey: ["wallet", "movements", kind],
    refetchInterval: 15_000,
    queryFn: ({ pageParam, signal }) => movementsApi.list({ kind, cursor: pageParam || undefined }, signal),
    initialPageParam: "",
    getNextPageParam: (last) => last.next_cursor || undefined,
  });
  const rows = useMemo(() => q.data?.pages.flatMap((p) => p.movements) ?? [], [q.data]);
  return (
    <section className="dash-card wallet-history" aria-label={title} data-testid={testId}>
      <h2>{title}</h2>
      {q.isError ? (
        <p className="wallet-error" role="alert">
          {errorText(q.error, t`Network anomaly`)}{" "}
          <button type="button" className="button" onClick={() => void q.refetch()}>
            <Trans>Retry</Trans>
          </button>
        </p>
      ) : null}
      <WalletTable label={title} rows={rows} columns={columns} rowId={(m) => m.id} empty={t`No records yet.`} testId={`${testId}-table`} />
      {q.hasNextPage ? (
        <button type="button" className="button wallet-more" disabled={q.isFetchingNextPage} onClick={() => void q.fetchNextPage()}>
          <Trans>Load more</Trans>
        </button>
      ) : null}
    </section>
  );
}

function useMovementTime(): (m: Movement) => string {
  const time = useFormatTime();
  return (m) => time(Date.parse(m.created_at));
}

// The exchange and coin pickers every form starts with.
// prefer: the exchange and coin to start on (a form restored after the second factor step-up).
function usePickers(
  kind: "OTHER" | "WITHDRAW" | "EXCHANGE" | "CONVERT",
  filter?: (a: Asset) => boolean,
  prefer?: { exchange?: string; coin?: string } | null,
) {
  const [exchange, setExchange] = useStartExchange();
  useEffect(() => {
    if (prefer?.exchange) setExchange(prefer.exchange);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const assets = useAssets(exchange);
  const list = filter ? assets.filter(filter) : assets;
  const coins = list.map((a) => a.coin);
  const recent = useQuery(walletQueries.coins(kind)).data ?? [];
  const [coin, setCoin] = useState("");
  useEffect(() => {
    if (coin !== "" && coins.includes(coin)) return;
    const kept = prefer?.coin && coins.includes(prefer.coin) ? prefer.coin : undefined;
    const first = kept ?? recent.find((c) => coins.includes(c)) ?? (coins.includes("USDT") ? "USDT" : (coins[0] ?? ""));
    if (first !== coin) setCoin(first);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [coins.join(","), recent.join(","), coin]);
  const asset = list.find((a) => a.coin === coin);
  return { exchange, setExchange, coins, coin, setCoin, asset, assets };
}

function useSettings(): Settings | undefined {
  return useQuery({ queryKey: ["wallet", "settings"], queryFn: ({ signal }) => movementsApi.settings(signal), staleTime: 5 * 60_000 }).data;
}

// Shown on a form restored after the second factor step-up: nothing was sent yet.
function ConfirmAgain() {
  return (
    <p className="wallet-warning" role="status" data-testid="step-up-restored">
      <Trans>Your code is confirmed and your entries are back. Check them and confirm again: nothing was sent yet.</Trans>
    </p>
  );
}

// --- Transfer ---------------------------------------------------------------------------------------------------

export function TransferPage() {
  const { t } = useLingui();
  const { i18n } = useLinguiCore();
  const qc = useQueryClient();
  const exchanges = useWalletExchanges();
  const p = usePickers("OTHER");
  const [from, setFrom] = useState<WalletName>("funding");
  const to: WalletName = from === "funding" ? "trading" : "funding";
  const available = useAvailable(p.exchange, from, p.coin);
  const precision = p.asset?.precision ?? 8;
  const rules = useRef<AmountRules>({ precision });
  rules.current = { precision, available };
  const schema = useMemo(() => z.object({ amount: amountSchema(rules, (c) => amountText(i18n, c)) }), [i18n]);
  const form = useZodForm(schema, { defaultValues: { amount: "" } });
  const [result, setResult] = useState<Submitted | null>(null);
  const key = useRef(movementsApi.newKey());
  const refresh = useRefresh();
  const amount = useAmount();
  const time = useFormatTime();
  const walletLabel = (w: string) => (w === "funding" ? t`Funding wallet` : w === "trading" ? t`Trading wallet` : w);
  const columns: Column<Transfer>[] = [
    { id: "time", header: t`Time`, cell: (r) => time(r.time), sort: (a, b) => a.time - b.time },
    { id: "coin", header: t`Coin`, cell: (r) => r.coin },
    { id: "amount", header: t`Amount`, cell: (r) => amount(r.amount), numeric: true },
    { id: "from", header: t`From`, cell: (r) => walletLabel(r.from) },
    { id: "to", header: t`To`, cell: (r) => walletLabel(r.to) },
    { id: "status", header: t`Status`, cell: (r) => <StatusBadge status={r.status} /> },
  ];
  return (
    <div className="dash-stack" data-testid="wallet-transfer">
      <section className="dash-card">
        <h2>
          <Trans>Transfer</Trans>
        </h2>
        <p className="auth-hint">
          <Trans>Move a coin between your funding and trading wallets on one exchange.</Trans>
        </p>
        <Form
          form={form}
          className="wallet-form"
          aria-label={t`Transfer`}
          data-testid="transfer-form"
          onSubmit={async (v) => {
            setResult(null);
            try {
              const r = await movementsApi.transfer({ exchange: p.exchange, asset: p.coin, amount: v.amount.trim(), from, to }, key.current);
              key.current = movementsApi.newKey();
              setResult(r);
              form.reset({ amount: "" });
              refresh();
            } catch (e) {
              if (!isApiError(e) || e.status >= 500) throw e;
              key.current = movementsApi.newKey();
              refusalOn(form as unknown as UseFormReturn<FieldValues, unknown, unknown>, e, t`Network anomaly`);
            }
          }}
        >
          <div className="wallet-form-grid">
            <ExchangeSelect label={t`Exchange`} exchanges={exchanges} value={p.exchange} onChange={p.setExchange} testId="transfer-exchange" />
            <CoinSelect
              label={t`Coin`}
              kind="OTHER"
              coins={p.coins}
              value={p.coin}
              testId="transfer-coin"
              onChange={(c) => {
                p.setCoin(c);
                rememberCoin("OTHER", c, (l) => qc.setQueryData(walletKeys.coins("OTHER"), l));
              }}
            />
          </div>
          <div className="wallet-form-grid">
            <Select label={t`From`} value={from} onChange={(v) => setFrom(v as WalletName)} testId="transfer-from">
              <option value="funding">{t`Funding wallet`}</option>
              <option value="trading">{t`Trading wallet`}</option>
            </Select>
            <div className="field wallet-field">
              <span className="field-label">
                <Trans>To</Trans>
              </span>
              <div className="wallet-amount-row">
                <span className="input" data-testid="transfer-to">
                  {walletLabel(to)}
                </span>
                <button type="button" className="button" onClick={() => setFrom(to)} aria-label={t`Swap the wallets`} data-testid="transfer-swap">
                  ⇅
                </button>
              </div>
            </div>
          </div>
          <AmountField
            label={t`Amount`}
            max={maxAmount(available, undefined, precision)}
            description={
              <span data-testid="transfer-available">
                <Trans>Available: {available === undefined ? "—" : `${amount(available)} ${p.coin}`}</Trans>
              </span>
            }
          />
          <FormError />
          <SubmitButton testId="transfer-submit">
            <Trans>Transfer</Trans>
          </SubmitButton>
          <Outcome result={result} done={<Trans>Transfer successful.</Trans>} />
        </Form>
      </section>
      <HistorySection<Transfer> title={t`Transfer history`} kind="transfers" exchange={p.exchange} columns={columns} coins={p.coins} testId="transfer-history" />
    </div>
  );
}

// --- Withdraw ---------------------------------------------------------------------------------------------------

export function WithdrawPage() {
  const { t } = useLingui();
  const { i18n } = useLinguiCore();
  const qc = useQueryClient();
  const member = useMember();
  const navigate = useNavigate();
  const exchanges = useWalletExchanges();
  const back = useDraft("withdraw");
  const p = usePickers("WITHDRAW", (a) => a.networks.some((n) => n.withdraw_enabled), back.draft);
  const networks = (p.asset?.networks ?? []).filter((n) => n.withdraw_enabled);
  const [network, setNetwork] = useState(back.draft?.network ?? "");
  const net = networks.find((n) => n.network === network) ?? networks[0];
  const available = useAvailable(p.exchange, useWithdrawWallet(p.exchange), p.coin);
  const precision = net?.precision ?? p.asset?.precision ?? 8;
  const rules = useRef<AmountRules>({ precision });
  rules.current = { precision, available, min: net?.withdraw_min, max: net?.withdraw_max, fee: net?.withdraw_fee };
  const memoRequired = net?.memo_required ?? false;
  const memoRef = useRef(memoRequired);
  memoRef.current = memoRequired;
  // A member with an authenticator app withdraws from a session that passed it (aal2): else a step-up first.
  const stepUp = (member?.two_factor.totp ?? false) && member?.aal !== "aal2";
  const [refusedAal, setRefusedAal] = useState(false);
  const schema = useMemo(
    () =>
      z
        .object({
          amount: amountSchema(rules, (c) => amountText(i18n, c)),
          address: z.string().trim().min(1, "required").max(256),
          memo: z.string().trim().max(128),
        })
        .superRefine((v, ctx) => {
          if (memoRef.current && v.memo === "") ctx.addIssue({ code: "custom", path: ["memo"], message: "required" });
        }),
    [i18n],
  );
  const kept = back.draft?.values;
  const form = useZodForm(schema, { defaultValues: { amount: kept?.amount ?? "", address: kept?.address ?? "", memo: kept?.memo ?? "" } });
  const [result, setResult] = useState<Submitted | null>(null);
  const key = useRef(movementsApi.newKey());
  const refresh = useRefresh();
  const amount = useAmount();
  const time = useFormatTime();
  const columns: Column<Withdrawal>[] = [
    { id: "time", header: t`Time`, cell: (r) => time(r.time), sort: (a, b) => a.time - b.time },
    { id: "coin", header: t`Coin`, cell: (r) => r.coin },
    { id: "network", header: t`Network`, cell: (r) => r.network },
    { id: "amount", header: t`Amount`, cell: (r) => amount(r.amount), numeric: true },
    { id: "fee", header: t`Fee`, cell: (r) => amount(r.fee), numeric: true },
    { id: "address", header: t`Address`, cell: (r) => <span className="wallet-mono">{r.address}</span> },
    { id: "status", header: t`Status`, cell: (r) => <StatusBadge status={r.status} /> },
  ];
  return (
    <div className="dash-stack" data-testid="wallet-withdraw">
      <section className="dash-card">
        <h2>
          <Trans>Withdraw</Trans>
        </h2>
        <Form
          form={form}
          className="wallet-form"
          aria-label={t`Withdraw`}
          data-testid="withdraw-form"
          onSubmit={async (v) => {
            setResult(null);
            back.dismiss();
            try {
              const r = await movementsApi.withdraw(
                {
                  exchange: p.exchange,
                  asset: p.coin,
                  network: net?.network ?? "",
                  amount: v.amount.trim(),
                  address: v.address.trim(),
                  memo: v.memo.trim() || undefined,
                },
                key.current,
              );
              key.current = movementsApi.newKey();
              setResult(r);
              form.reset({ amount: "", address: "", memo: "" });
              refresh();
            } catch (e) {
              if (!isApiError(e) || e.status >= 500) throw e;
              key.current = movementsApi.newKey();
              if (isStale(e)) {
                saveDraft("withdraw", { exchange: p.exchange, coin: p.coin, network: net?.network, values: { amount: v.amount, address: v.address, memo: v.memo } });
                void navigate(stepUpPath(e, "withdraw"));
                return;
              }
              if (e.code === "aal2_required") setRefusedAal(true);
              refusalOn(form as unknown as UseFormReturn<FieldValues, unknown, unknown>, e, t`Network anomaly`);
            }
          }}
        >
          <div className="wallet-form-grid">
            <ExchangeSelect label={t`Exchange`} exchanges={exchanges} value={p.exchange} onChange={p.setExchange} testId="withdraw-exchange" />
            <CoinSelect
              label={t`Coin`}
              kind="WITHDRAW"
              coins={p.coins}
              value={p.coin}
              testId="withdraw-coin"
              onChange={(c) => {
                p.setCoin(c);
                setNetwork("");
                rememberCoin("WITHDRAW", c, (l) => qc.setQueryData(walletKeys.coins("WITHDRAW"), l));
              }}
            />
            <Select label={t`Network`} value={net?.network ?? ""} onChange={setNetwork} testId="withdraw-network">
              {networks.map((n) => (
                <option key={n.network} value={n.network}>
                  {n.name || n.network}
                </option>
              ))}
            </Select>
          </div>
          <TextField name="address" label={t`Address`} required autoComplete="off" data-testid="withdraw-address" />
          {memoRequired ? (
            <TextField
              name="memo"
              label={t`Memo / Tag`}
              required
              autoComplete="off"
              description={t`The receiving platform needs this memo or tag.`}
              data-testid="withdraw-memo"
            />
          ) : null}
          <AmountField
            label={t`Amount`}
            max={maxAmount(available, net?.withdraw_fee, precision)}
            description={t`The amount that arrives; the network fee is charged on top.`}
          />
          <Facts
            items={[
              [t`Available`, available === undefined ? "—" : `${amount(available)} ${p.coin}`, "withdraw-available"],
              [t`Network fee`, net ? `${amount(net.withdraw_fee)} ${p.coin}` : "—", "withdraw-fee"],
              [t`Minimum`, net ? `${amount(net.withdraw_min)} ${p.coin}` : "—", "withdraw-min"],
            ]}
          />
          {stepUp || refusedAal ? (
            <p className="wallet-warning" role="note" data-testid="withdraw-step-up">
              <Trans>
                Withdrawals need your authenticator app code in this session.{" "}
                <Link to={`/otpauth?return_to=${encodeURIComponent("/wallet?page=withdraw")}`}>Enter the code</Link>
              </Trans>
            </p>
          ) : null}
          {back.restored ? <ConfirmAgain /> : null}
          <FormError />
          <SubmitButton testId="withdraw-submit">
            <Trans>Withdraw</Trans>
          </SubmitButton>
          <Outcome result={result} done={<Trans>Withdrawal submitted.</Trans>} />
        </Form>
      </section>
      <HistorySection<Withdrawal>
        title={t`Withdrawal history`}
        kind="withdrawals"
        exchange={p.exchange}
        columns={columns}
        coins={p.coins}
        testId="withdraw-history"
      />
    </div>
  );
}

// --- Convert ----------------------------------------------------------------------------------------------------

function useSecondsLeft(expiresAt: string | undefined): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!expiresAt) return;
    const id = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(id);
  }, [expiresAt]);
  if (!expiresAt) return 0;
  return Math.max(0, Math.ceil((Date.parse(expiresAt) - now) / 1000));
}

export function ConvertPage() {
  const { t } = useLingui();
  const { i18n } = useLinguiCore();
  const qc = useQueryClient();
  const exchanges = useWalletExchanges();
  const p = usePickers("CONVERT");
  const [toCoin, setToCoin] = useState("");
  const toChoices = p.coins.filter((c) => c !== p.coin);
  const to = toChoices.includes(toCoin) ? toCoin : (toChoices.find((c) => c === (p.coin === "USDT" ? "BTC" : "USDT")) ?? toChoices[0] ?? "");
  const available = useAvailable(p.exchange, "funding", p.coin);
  const precision = p.asset?.precision ?? 8;
  const rules = useRef<AmountRules>({ precision });
  rules.current = { precision, available };
  const schema = useMemo(() => z.object({ amount: amountSchema(rules, (c) => amountText(i18n, c)) }), [i18n]);
  const form = useZodForm(schema, { defaultValues: { amount: "" } });
  const [quote, setQuote] = useState<ConvertQuote | null>(null);
  const [result, setResult] = useState<Submitted | null>(null);
  const key = useRef(movementsApi.newKey());
  const refresh = useRefresh();
  const left = useSecondsLeft(quote?.expires_at);
  const amount = useAmount();
  const time = useFormatTime();
  const trade = useMutation({
    mutationFn: (q: ConvertQuote) => movementsApi.convert(q, key.current),
    onSuccess: (r) => {
      key.current = movementsApi.newKey();
      setResult(r);
      setQuote(null);
      form.reset({ amount: "" });
      refresh();
    },
    onError: () => {
      key.current = movementsApi.newKey();
    },
  });
  const columns: Column<Convert>[] = [
    { id: "time", header: t`Time`, cell: (r) => time(r.time), sort: (a, b) => a.time - b.time },
    { id: "from", header: t`From`, cell: (r) => `${amount(r.from_amount)} ${r.from_coin}`, numeric: true },
    { id: "to", header: t`To`, cell: (r) => `${amount(r.to_amount)} ${r.to_coin}`, numeric: true },
    { id: "price", header: t`Price`, cell: (r) => amount(r.price), numeric: true },
    { id: "status", header: t`Status`, cell: (r) => <StatusBadge status={r.status} /> },
  ];
  return (
    <div className="dash-stack" data-testid="wallet-convert">
      <section className="dash-card">
        <h2>
          <Trans>Convert</Trans>
        </h2>
        <Form
          form={form}
          className="wallet-form"
          aria-label={t`Convert`}
          data-testid="convert-form"
          onSubmit={async (v) => {
            setResult(null);
            setQuote(null);
            trade.reset();
            try {
              setQuote(await movementsApi.quote({ exchange: p.exchange, from: p.coin, to, from_amount: v.amount.trim() }));
            } catch (e) {
              if (!isApiError(e) || e.status >= 500) throw e;
              refusalOn(form as unknown as UseFormReturn<FieldValues, unknown, unknown>, e, t`Network anomaly`);
            }
          }}
        >
          <div className="wallet-form-grid">
            <ExchangeSelect label={t`Exchange`} exchanges={exchanges} value={p.exchange} onChange={p.setExchange} testId="convert-exchange" />
            <CoinSelect
              label={t`From`}
              kind="CONVERT"
              coins={p.coins}
              value={p.coin}
              testId="convert-from"
              onChange={(c) => {
                p.setCoin(c);
                setQuote(null);
                rememberCoin("CONVERT", c, (l) => qc.setQueryData(walletKeys.coins("CONVERT"), l));
              }}
            />
            <Select
              label={t`To`}
              value={to}
              onChange={(c) => {
                setToCoin(c);
                setQuote(null);
              }}
              testId="convert-to"
            >
              {toChoices.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </Select>
          </div>
          <AmountField
            label={t`Amount`}
            max={maxAmount(available, undefined, precision)}
            description={<Trans>Available: {available === undefined ? "—" : `${amount(available)} ${p.coin}`}</Trans>}
          />
          <FormError />
          <SubmitButton testId="convert-quote">
            <Trans>Get a quote</Trans>
          </SubmitButton>
        </Form>
        {quote ? (
          <div className="wallet-quote" data-testid="convert-quote-card">
            <Facts
              items={[
                [t`You pay`, `${amount(quote.from_amount)} ${quote.from}`],
                [t`You receive`, `${amount(quote.to_amount)} ${quote.to}`, "convert-receive"],
                [t`Price`, `1 ${quote.from} = ${amount(quote.price)} ${quote.to}`],
                [t`Quote expires in`, left > 0 ? t`${left} s` : t`Expired`, "convert-expiry"],
              ]}
            />
            <div className="wallet-actions">
              {left > 0 ? (
                <button
                  type="button"
                  className="button button--primary"
                  disabled={trade.isPending}
                  data-testid="convert-confirm"
                  onClick={() => trade.mutate(quote)}
                >
                  <Trans>Convert</Trans>
                </button>
              ) : null}
            </div>
            {left === 0 ? (
              <p className="auth-hint">
                <Trans>The quote expired. Get a new one.</Trans>
              </p>
            ) : null}
          </div>
        ) : null}
        {trade.isError ? (
          <p className="wallet-error" role="alert">
            {errorText(trade.error, t`Network anomaly`)}
          </p>
        ) : null}
        <Outcome result={result} done={<Trans>Conversion successful.</Trans>} />
      </section>
      <HistorySection<Convert> title={t`Convert history`} kind="converts" exchange={p.exchange} columns={columns} coins={p.coins} testId="convert-history" />
    </div>
  );
}

// --- Exchange (transfer to a partner exchange) ------------------------------------------------------------------

export function ExchangePage() {
  const { t } = useLingui();
  const { i18n } = useLinguiCore();
  const qc = useQueryClient();
  const navigate = useNavigate();
  const exchanges = useWalletExchanges();
  const back = useDraft("exchange");
  const p = usePickers("EXCHANGE", (a) => a.networks.some((n) => n.withdraw_enabled), back.draft);
  const targets = (exchanges ?? []).filter((e) => e.slug !== p.exchange);
  const [target, setTarget] = useState(back.draft?.target ?? "");
  const tgt = targets.some((e) => e.slug === target) ? target : (targets[0]?.slug ?? "");
  const ff = useSettings()?.fee_free;
  const feeFree = ff !== undefined && tgt === ff.exchange && p.coin === ff.asset;
  const networks = (p.asset?.networks ?? []).filter((n) => n.withdraw_enabled);
  const [network, setNetwork] = useState(back.draft?.network ?? "");
  const net = networks.find((n) => n.network === network) ?? networks[0];
  const available = useAvailable(p.exchange, useWithdrawWallet(p.exchange), p.coin);
  const precision = net?.precision ?? p.asset?.precision ?? 8;
  const rules = useRef<AmountRules>({ precision });
  rules.current = feeFree
    ? { precision, available, min: ff.min, max: ff.max }
    : { precision, available, min: net?.withdraw_min, max: net?.withdraw_max, fee: net?.withdraw_fee };
  const schema = useMemo(() => z.object({ amount: amountSchema(rules, (c) => amountText(i18n, c)) }), [i18n]);
  const form = useZodForm(schema, { defaultValues: { amount: back.draft?.values.amount ?? "" } });
  const [result, setResult] = useState<Submitted | null>(null);
  const key = useRef(movementsApi.newKey());
  const refresh = useRefresh();
  const amount = useAmount();
  const mtime = useMovementTime();
  const columns: Column<Movement>[] = [
    { id: "time", header: t`Time`, cell: mtime },
    { id: "route", header: t`Route`, cell: (m) => `${exchangeName(exchanges, m.exchange)} → ${exchangeName(exchanges, m.target_exchange ?? "")}` },
    { id: "amount", header: t`Amount`, cell: (m) => `${amount(m.amount)} ${m.asset ?? ""}`, numeric: true },
    { id: "fee", header: t`Fee`, cell: (m) => (m.fee ? amount(m.fee) : "—"), numeric: true },
    { id: "state", header: t`Status`, cell: (m) => <MovementStatusBadge m={m} /> },
  ];
  return (
    <div className="dash-stack" data-testid="wallet-exchange">
      <section className="dash-card">
        <h2>
          <Trans>Exchange</Trans>
        </h2>
        <p className="auth-hint">
          <Trans>Send a coin from your funding wallet to your account on a partner exchange.</Trans>
        </p>
        <Form
          form={form}
          className="wallet-form"
          aria-label={t`Exchange`}
          data-testid="exchange-form"
          onSubmit={async (v) => {
            setResult(null);
            back.dismiss();
            try {
              const r = await movementsApi.exchangeTransfer(
                { exchange: p.exchange, target: tgt, asset: p.coin, network: net?.network ?? "", amount: v.amount.trim() },
                key.current,
              );
              key.current = movementsApi.newKey();
              setResult(r);
              form.reset({ amount: "" });
              refresh();
            } catch (e) {
              if (!isApiError(e) || e.status >= 500) throw e;
              key.current = movementsApi.newKey();
              if (isStale(e)) {
                saveDraft("exchange", { exchange: p.exchange, coin: p.coin, network: net?.network, target: tgt, values: { amount: v.amount } });
                void navigate(stepUpPath(e, "exchange"));
                return;
              }
              refusalOn(form as unknown as UseFormReturn<FieldValues, unknown, unknown>, e, t`Network anomaly`);
            }
          }}
        >
          <div className="wallet-form-grid">
            <ExchangeSelect label={t`From`} exchanges={exchanges} value={p.exchange} onChange={p.setExchange} testId="exchange-from" />
            <ExchangeSelect label={t`To`} exchanges={targets} value={tgt} onChange={setTarget} testId="exchange-to" />
            <CoinSelect
              label={t`Coin`}
              kind="EXCHANGE"
              coins={p.coins}
              value={p.coin}
              testId="exchange-coin"
              onChange={(c) => {
                p.setCoin(c);
                setNetwork("");
                rememberCoin("EXCHANGE", c, (l) => qc.setQueryData(walletKeys.coins("EXCHANGE"), l));
              }}
            />
            <Select label={t`Network`} value={net?.network ?? ""} onChange={setNetwork} testId="exchange-network">
              {networks.map((n) => (
                <option key={n.network} value={n.network}>
                  {n.name || n.network}
                </option>
              ))}
            </Select>
          </div>
          <AmountField label={t`Amount`} max={maxAmount(available, feeFree ? undefined : net?.withdraw_fee, precision)} />
          <Facts
            items={[
              [t`Available`, available === undefined ? "—" : `${amount(available)} ${p.coin}`],
              [t`Fee`, feeFree ? t`Free` : net ? `${amount(net.withdraw_fee)} ${p.coin}` : "—", "exchange-fee"],
              [t`Range`, feeFree ? `${amount(ff.min)} – ${amount(ff.max)} ${ff.asset}` : net ? `≥ ${amount(net.withdraw_min)} ${p.coin}` : "—"],
            ]}
          />
          <p className="auth-hint">
            <Trans>Arrives after 0.5 to 1 hour.</Trans>
          </p>
          {back.restored ? <ConfirmAgain /> : null}
          <FormError />
          <SubmitButton testId="exchange-submit">
            <Trans>Send</Trans>
          </SubmitButton>
          <Outcome result={result} done={<Trans>Sent. It arrives on the other exchange after 0.5 to 1 hour.</Trans>} />
        </Form>
      </section>
      <MovementHistory kind="exchange_transfer" title={t`Exchange history`} columns={columns} testId="exchange-history" />
    </div>
  );
}

// --- Gift -------------------------------------------------------------------------------------------------------

const EMAIL_OR_ID = /^(?:[^\s@]+@[^\s@]+\.[^\s@]+|[0-9a-fA-F-]{8,64})$/;

export function GiftPage() {
  const { t } = useLingui();
  const { i18n } = useLinguiCore();
  const navigate = useNavigate();
  const exchanges = useWalletExchanges();
  const back = useDraft("gift");
  const p = usePickers("OTHER", undefined, back.draft);
  const available = useAvailable(p.exchange, "funding", p.coin);
  const precision = p.asset?.precision ?? 8;
  const rules = useRef<AmountRules>({ precision });
  rules.current = { precision, available };
  const schema = useMemo(
    () =>
      z.object({
        amount: amountSchema(rules, (c) => amountText(i18n, c)),
        recipient: z
          .string()
          .trim()
          .min(1, "required")
          .regex(EMAIL_OR_ID, t`Enter the member's e-mail address or member ID.`),
      }),
    [i18n, t],
  );
  const form = useZodForm(schema, { defaultValues: { amount: back.draft?.values.amount ?? "", recipient: back.draft?.values.recipient ?? "" } });
  const [confirm, setConfirm] = useState<{ amount: string; recipient: string } | null>(null);
  const [result, setResult] = useState<Submitted | null>(null);
  const [refused, setRefused] = useState<string | null>(null);
  const key = useRef(movementsApi.newKey());
  const refresh = useRefresh();
  const amount = useAmount();
  const mtime = useMovementTime();
  const columns: Column<Movement>[] = [
    { id: "time", header: t`Time`, cell: mtime },
    { id: "dir", header: t`Direction`, cell: (m) => (m.direction === "in" ? t`Received` : t`Sent`) },
    { id: "who", header: t`Member`, cell: (m) => <span className="wallet-mono">{(m.direction === "in" ? m.sender : m.recipient) || "—"}</span> },
    { id: "amount", header: t`Amount`, cell: (m) => `${amount(m.amount)} ${m.asset ?? ""}`, numeric: true },
    { id: "exchange", header: t`Exchange`, cell: (m) => exchangeName(exchanges, m.exchange) },
    { id: "state", header: t`Status`, cell: (m) => <MovementStatusBadge m={m} /> },
  ];
  return (
    <div className="dash-stack" data-testid="wallet-gift">
      <section className="dash-card">
        <h2>
          <Trans>Gift</Trans>
        </h2>
        <p className="auth-hint">
          <Trans>Send a coin to another exhub member. Gifts move between exhub-managed exchange accounts; they are not available for linked API keys.</Trans>
        </p>
        <Form
          form={form}
          className="wallet-form"
          aria-label={t`Gift`}
          data-testid="gift-form"
          onSubmit={(v) => {
            setResult(null);
            setRefused(null);
            back.dismiss();
            setConfirm({ amount: v.amount.trim(), recipient: v.recipient.trim() });
          }}
        >
          <div className="wallet-form-grid">
            <ExchangeSelect label={t`Exchange`} exchanges={exchanges} value={p.exchange} onChange={p.setExchange} testId="gift-exchange" />
            <CoinSelect label={t`Coin`} kind="OTHER" coins={p.coins} value={p.coin} onChange={p.setCoin} testId="gift-coin" />
          </div>
          <TextField name="recipient" label={t`Recipient (e-mail or member ID)`} required autoComplete="off" data-testid="gift-recipient" />
          <AmountField
            label={t`Amount`}
            max={maxAmount(available, undefined, precision)}
            description={<Trans>Available: {available === undefined ? "—" : `${amount(available)} ${p.coin}`}</Trans>}
          />
          {back.restored ? <ConfirmAgain /> : null}
          <FormError />
          <SubmitButton testId="gift-submit">
            <Trans>Send gift</Trans>
          </SubmitButton>
          {refused ? (
            <p className="wallet-error" role="alert">
              {refused}
            </p>
          ) : null}
          <Outcome result={result} done={<Trans>Gift sent.</Trans>} />
        </Form>
      </section>
      {confirm ? (
        <Suspense fallback={null}>
          <ConfirmDialog
            isOpen
            onOpenChange={(o) => {
              if (!o) setConfirm(null);
            }}
            title={t`Send gift`}
            confirmLabel={<Trans>Send</Trans>}
            errorText={<Trans>Sending failed. Please try again.</Trans>}
            onConfirm={async () => {
              try {
                const r = await movementsApi.gift({ exchange: p.exchange, asset: p.coin, amount: confirm.amount, recipient: confirm.recipient }, key.current);
                key.current = movementsApi.newKey();
                setResult(r);
                form.reset({ amount: "", recipient: "" });
                refresh();
                return true;
              } catch (e) {
                if (!isApiError(e) || e.status >= 500) return false;
                key.current = movementsApi.newKey();
                if (isStale(e)) {
                  saveDraft("gift", { exchange: p.exchange, coin: p.coin, values: { amount: confirm.amount, recipient: confirm.recipient } });
                  void navigate(stepUpPath(e, "gift"));
                  return true;
                }
                setRefused(errorText(e, t`Network anomaly`));
                return true;
              }
            }}
          >
            <p data-testid="gift-confirm-text">
              <Trans>
                Send {confirm.amount} {p.coin} on {exchangeName(exchanges, p.exchange)} to {confirm.recipient}? A gift cannot be taken back.
              </Trans>
            </p>
          </ConfirmDialog>
        </Suspense>
      ) : null}
      <MovementHistory kind="gift" title={t`Gift history`} columns={columns} testId="gift-history" />
    </div>
  );
}

// --- Faucet (demo mode) -----------------------------------------------------------------------------------------

// "Get demo funds" (demo mode only, as GET /api/v1/wallet/settings says): the operator's demo grant into the
// member's account on the exchange.
export function Faucet({ exchange }: { exchange: string }) {
  const { t } = useLingui();
  const settings = useSettings();
  const refresh = useRefresh();
  const key = useRef(movementsApi.newKey());
  const m = useMutation({
    mutationFn: () => movementsApi.faucet(exchange, key.current),
    onSettled: () => {
      key.current = movementsApi.newKey();
      refresh();
    },
  });
  if (!settings?.faucet || exchange === "") return null;
  return (
    <section className="dash-card" data-testid="faucet">
      <h2>
        <Trans>Demo funds</Trans>
      </h2>
      <p className="auth-hint">
        <Trans>
          This is a demo: get {settings.faucet_amount} {settings.faucet_asset} of test funds credited to your account on this exchange.
        </Trans>
      </p>
      <button type="button" className="button button--primary" disabled={m.isPending} onClick={() => m.mutate()} data-testid="faucet-button">
        <Trans>Get demo funds</Trans>
      </button>
      {m.data ? <Outcome result={m.data} done={<Trans>Demo funds credited.</Trans>} /> : null}
      {m.isError ? (
        <p className="wallet-error" role="alert">
          {errorText(m.error, t`Network anomaly`)}
        </p>
      ) : null}
    </section>
  );
}

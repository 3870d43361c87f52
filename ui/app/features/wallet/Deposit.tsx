import { Plural, Trans, useLingui } from "@lingui/react/macro";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { QRCodeSVG } from "qrcode.react";
import { useEffect, useMemo, useState } from "react";
import { errorText } from "~/lib/errors";
import { walletApi, walletKeys, walletQueries, type Deposit } from "./api";
import { Faucet } from "./Movements";
import {
  CoinSelect,
  CopyButton,
  ExchangeSelect,
  exchangeName,
  HistorySection,
  rememberCoin,
  Select,
  StatusBadge,
  useAmount,
  useFormatTime,
  useWalletExchanges,
  type Column,
} from "./parts";

// Deposit: the exchange (the member's deposit exchange by default, which they can change), coin and network
// pickers (recent coins first), the address with its memo or tag, copy buttons and a QR code; in demo mode the
// faucet; then the exchange's deposit history.

// The exchange a wallet page starts on: the one asked for, else the member's deposit exchange, else the first.
export function useStartExchange(): [string, (v: string) => void] {
  const exchanges = useWalletExchanges();
  const target = useQuery(walletQueries.depositExchange()).data?.exchange ?? "";
  const [chosen, setChosen] = useState("");
  const slugs = (exchanges ?? []).map((e) => e.slug);
  const exchange = chosen && slugs.includes(chosen) ? chosen : target && slugs.includes(target) ? target : (slugs[0] ?? "");
  return [exchange, setChosen];
}

export function DepositPage() {
  const { t } = useLingui();
  const qc = useQueryClient();
  const exchanges = useWalletExchanges();
  const [exchange, setExchange] = useStartExchange();
  const target = useQuery(walletQueries.depositExchange()).data?.exchange ?? "";
  const assets = useQuery(walletQueries.assets(exchange));
  const coins = useMemo(
    () => (assets.data?.assets ?? []).filter((a) => a.networks.some((n) => n.deposit_enabled)).map((a) => a.coin),
    [assets.data],
  );
  const recent = useQuery(walletQueries.coins("DEPOSIT")).data ?? [];
  const [coin, setCoin] = useState("");
  const [network, setNetwork] = useState("");
  // Start on the member's last deposited coin (or USDT) once the coins are known.
  useEffect(() => {
    if (coin !== "" && coins.includes(coin)) return;
    const first = recent.find((c) => coins.includes(c)) ?? (coins.includes("USDT") ? "USDT" : (coins[0] ?? ""));
    if (first !== coin) setCoin(first);
  }, [coins, recent, coin]);
  const networks = (assets.data?.assets.find((a) => a.coin === coin)?.networks ?? []).filter((n) => n.deposit_enabled);
  const net = networks.find((n) => n.network === network) ?? networks[0];
  const address = useQuery(walletQueries.address(exchange, coin, net?.network ?? ""));
  const netName = net?.name || net?.network || "";
  const confirmations = net?.confirmations ?? 0;
  const setTarget = useMutation({
    mutationFn: (ex: string) => walletApi.setDepositExchange(ex),
    onSuccess: (r) => qc.setQueryData(walletKeys.depositExchange, r),
  });
  const time = useFormatTime();
  const amount = useAmount();
  const columns: Column<Deposit>[] = [
    { id: "time", header: t`Time`, cell: (d) => time(d.time), sort: (a, b) => a.time - b.time },
    { id: "coin", header: t`Coin`, cell: (d) => d.coin },
    { id: "network", header: t`Network`, cell: (d) => d.network },
    { id: "amount", header: t`Amount`, cell: (d) => amount(d.amount), numeric: true },
    { id: "status", header: t`Status`, cell: (d) => <StatusBadge status={d.status} /> },
    { id: "tx", header: t`Transaction`, cell: (d) => <span className="wallet-mono">{d.tx_id || "—"}</span> },
  ];

  return (
    <div className="dash-stack" data-testid="wallet-deposit">
      <section className="dash-card">
        <h2>
          <Trans>Deposit</Trans>
        </h2>
        <div className="wallet-form-grid">
          <ExchangeSelect label={t`Exchange`} exchanges={exchanges} value={exchange} onChange={setExchange} testId="deposit-exchange" />
          <CoinSelect
            label={t`Coin`}
            kind="DEPOSIT"
            coins={coins}
            value={coin}
            testId="deposit-coin"
            onChange={(c) => {
              setCoin(c);
              setNetwork("");
              rememberCoin("DEPOSIT", c, (list) => qc.setQueryData(walletKeys.coins("DEPOSIT"), list));
            }}
          />
          <Select label={t`Network`} value={net?.network ?? ""} onChange={setNetwork} testId="deposit-network">
            {networks.map((n) => (
              <option key={n.network} value={n.network}>
                {n.name || n.network}
              </option>
            ))}
          </Select>
        </div>
        <p className="auth-hint" data-testid="deposit-target">
          {target === exchange ? (
            <Trans>This is your deposit exchange.</Trans>
          ) : (
            <>
              <Trans>Your deposit exchange: {target ? exchangeName(exchanges, target) : t`none chosen`}</Trans>{" "}
              <button
                type="button"
                className="button"
                data-testid="set-deposit-exchange"
                disabled={setTarget.isPending || exchange === ""}
                onClick={() => setTarget.mutate(exchange)}
              >
                <Trans>Make {exchangeName(exchanges, exchange)} my deposit exchange</Trans>
              </button>
            </>
          )}
        </p>
        {setTarget.isError ? (
          <p className="wallet-error" role="alert">
            {errorText(setTarget.error, t`Network anomaly`)}
          </p>
        ) : null}
        {assets.isError ? (
          <p className="wallet-error" role="alert">
            {errorText(assets.error, t`Network anomaly`)}
          </p>
        ) : null}
        {address.isError ? (
          <p className="wallet-error" role="alert">
            {errorText(address.error, t`Network anomaly`)}{" "}
            <button type="button" className="button" onClick={() => void address.refetch()}>
              <Trans>Retry</Trans>
            </button>
          </p>
        ) : null}
        {address.data ? (
          <div className="wallet-address" data-testid="deposit-address-card">
            <div className="wallet-qr" aria-hidden="true">
              <QRCodeSVG value={address.data.address} size={148} marginSize={2} bgColor="#ffffff" fgColor="#000000" />
            </div>
            <dl className="wallet-address-fields">
              <div>
                <dt>
                  <Trans>Deposit address</Trans>
                </dt>
                <dd>
                  <code className="wallet-mono" data-testid="deposit-address">
                    {address.data.address}
                  </code>
                  <CopyButton text={address.data.address} label={t`Copy deposit address`} testId="copy-address" />
                </dd>
              </div>
              {address.data.memo ? (
                <div>
                  <dt>
                    <Trans>Memo / Tag</Trans>
                  </dt>
                  <dd>
                    <code className="wallet-mono" data-testid="deposit-memo">
                      {address.data.memo}
                    </code>
                    <CopyButton text={address.data.memo} label={t`Copy memo`} testId="copy-memo" />
                  </dd>
                </div>
              ) : null}
            </dl>
            {net?.memo_required ? (
              <p className="wallet-warning" role="note">
                <Trans>Send the memo or tag with the address, or the deposit cannot be credited.</Trans>
              </p>
            ) : null}
            <p className="auth-hint">
              <Trans>Send only {coin} on {netName} to this address.</Trans>{" "}
              <Trans>
                Credited after <Plural value={confirmations} one="# confirmation" other="# confirmations" />.
              </Trans>
            </p>
          </div>
        ) : address.isPending && net ? (
          <p className="auth-hint" aria-busy="true">
            <Trans>Loading…</Trans>
          </p>
        ) : null}
      </section>
      <Faucet exchange={exchange} />
      <HistorySection<Deposit>
        title={t`Deposit history`}
        kind="deposits"
        exchange={exchange}
        columns={columns}
        coins={coins}
        testId="deposit-history"
      />
    </div>
  );
}

import { MarketDataPage } from "~/features/market-data/MarketDataPage";

// Market Data: open interest and volume, long/short ratio, taker buy/sell
// volume and funding rate per exchange, symbol and period, from the
// analytics API (features/market-data).
export default function MarketData() {
  return <MarketDataPage />;
}

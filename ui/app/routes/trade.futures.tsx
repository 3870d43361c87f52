import { TradeScreen } from "~/features/trade/TradeScreen";
import type { Route } from "./+types/trade.futures";

export default function FuturesTrade({ params }: Route.ComponentProps) {
  return <TradeScreen area="futures" exchange={params.exchange} symbol={params.symbol} />;
}

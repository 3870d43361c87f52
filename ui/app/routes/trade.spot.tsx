import { TradeScreen } from "~/features/trade/TradeScreen";
import type { Route } from "./+types/trade.spot";

export default function SpotTrade({ params }: Route.ComponentProps) {
  return <TradeScreen area="spot" exchange={params.exchange} symbol={params.symbol} />;
}

import { TradePlaceholder } from "~/components/TradePlaceholder";
import type { Route } from "./+types/spot";

export default function Spot({ params }: Route.ComponentProps) {
  return <TradePlaceholder area="spot" exchange={params.exchange} symbol={params.symbol} />;
}

import { TradePlaceholder } from "~/components/TradePlaceholder";
import type { Route } from "./+types/futures";

export default function Futures({ params }: Route.ComponentProps) {
  return <TradePlaceholder area="futures" exchange={params.exchange} symbol={params.symbol} />;
}

import { TradePlaceholder } from "~/components/TradePlaceholder";

export default function Spot({ params }: { params: { exchange: string; symbol?: string } }) {
  return <TradePlaceholder area="spot" exchange={params.exchange} symbol={params.symbol} />;
}

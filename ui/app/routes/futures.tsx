import { TradePlaceholder } from "~/components/TradePlaceholder";

export default function Futures({ params }: { params: { exchange: string; symbol?: string } }) {
  return <TradePlaceholder area="futures" exchange={params.exchange} symbol={params.symbol} />;
}

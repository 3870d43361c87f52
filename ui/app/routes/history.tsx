import { HistoryScreen } from "~/features/history/History";

export default function History() {
  return <HistoryScreen />;
}

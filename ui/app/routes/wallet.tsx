import { WalletScreen } from "~/features/wallet/Wallet";

export default function Wallet() {
  return <WalletScreen />;
}

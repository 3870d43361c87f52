import { RecoveryStartScreen } from "~/features/auth/Recovery";

export default function ForgotPasswordA() {
  return <RecoveryStartScreen />;
}

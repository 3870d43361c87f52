import { RecoveryCodeScreen } from "~/features/auth/Recovery";

export default function ForgotPasswordB() {
  return <RecoveryCodeScreen />;
}

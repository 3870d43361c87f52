import { BindPasswordScreen } from "~/features/auth/Settings";

export default function BindPassword() {
  return <BindPasswordScreen />;
}

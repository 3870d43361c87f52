import { SecuritySettingsScreen } from "~/features/auth/Settings";

export default function Security() {
  return <SecuritySettingsScreen />;
}

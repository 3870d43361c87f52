import { ErrorScreen } from "~/features/auth/ErrorScreen";

export default function AuthError() {
  return <ErrorScreen />;
}

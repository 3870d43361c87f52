import { LoginScreen } from "~/features/auth/Login";

export default function Login() {
  return <LoginScreen />;
}

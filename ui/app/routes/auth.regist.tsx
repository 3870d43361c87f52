import { RegisterScreen } from "~/features/auth/Register";

export default function Register() {
  return <RegisterScreen />;
}

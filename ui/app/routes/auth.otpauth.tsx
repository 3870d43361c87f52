import { OtpAuthScreen } from "~/features/auth/OtpAuth";

export default function OtpAuth() {
  return <OtpAuthScreen />;
}

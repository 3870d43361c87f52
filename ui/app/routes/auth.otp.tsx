import { VerificationScreen } from "~/features/auth/Verification";

export default function Verification() {
  return <VerificationScreen />;
}

import { DashboardScreen } from "~/features/dashboard/Dashboard";

export default function Dashboard() {
  return <DashboardScreen />;
}

import { InboxScreen } from "~/features/inbox/Inbox";

export default function Inbox() {
  return <InboxScreen />;
}

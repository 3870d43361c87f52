import { PagePlaceholder } from "~/components/PagePlaceholder";

export default function Placeholder() {
  return <PagePlaceholder />;
}

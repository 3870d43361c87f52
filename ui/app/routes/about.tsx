import { AboutPage } from "~/features/about/About";

export default function About() {
  return <AboutPage />;
}

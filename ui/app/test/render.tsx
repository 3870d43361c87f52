import { render } from "@testing-library/react";
import { createRoutesStub, Outlet, useLocation } from "react-router";
import { AppShell } from "~/components/AppShell";
import { AppProviders } from "~/providers";
import Home, { clientLoader as homeLoader } from "~/routes/home";
import Market from "~/routes/market";
import MarketData from "~/routes/market-data";
import About from "~/routes/about";
import { PageTitle } from "~/components/PageTitle";
import Protected, { clientLoader as protectedLoader } from "~/routes/protected";
import Spot from "~/routes/spot";
import Futures from "~/routes/futures";

// A stand-in for the pages these shell tests do not render (sign-in screens, events, the member's pages): a title
// and a heading naming the page, as the real pages have, so the shell's routing and titles can be checked.
const standInNames: Record<string, string> = {
  login: "Log In",
  regist: "Sign Up",
  event: "Events",
  dashboard: "Dashboard",
  wallet: "Wallet",
  history: "History",
};

function StandIn() {
  const { pathname } = useLocation();
  const name = standInNames[pathname.split("/")[1] ?? ""] ?? "Page";
  return (
    <div className="page">
      <PageTitle page={name} />
      <h1>{name}</h1>
    </div>
  );
}

// The in-memory location, for tests of pages that keep state in the URL.
function LocationProbe() {
  const { pathname, search } = useLocation();
  return <output hidden data-testid="location">{`${pathname}${search}`}</output>;
}

function Shell() {
  return (
    <AppProviders>
      <AppShell>
        <Outlet />
      </AppShell>
      <LocationProbe />
    </AppProviders>
  );
}

// Renders the app shell and its routes in memory at the given path.
export function renderApp(path = "/") {
  const Stub = createRoutesStub([
    {
      path: "/",
      Component: Shell,
      HydrateFallback: () => null,
      children: [
        { index: true, Component: Home, loader: homeLoader },
        { path: "market", Component: Market },
        { path: "marketData", Component: MarketData },
        { path: "spot/:exchange/:symbol?", Component: Spot },
        { path: "futures/:exchange/:symbol?", Component: Futures },
        { path: "about", Component: About },
        ...["login", "regist", "event"].map((p) => ({ path: p, Component: StandIn })),
        {
          id: "protected",
          Component: Protected,
          loader: protectedLoader,
          children: ["dashboard", "wallet", "history"].map((p) => ({ path: p, Component: StandIn })),
        },
      ],
    },
  ]);
  return render(<Stub initialEntries={[path]} />);
}

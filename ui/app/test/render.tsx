import { render } from "@testing-library/react";
import { createRoutesStub, Outlet, useLocation } from "react-router";
import { AppShell } from "~/components/AppShell";
import { AppProviders } from "~/providers";
import Home, { clientLoader as homeLoader } from "~/routes/home";
import Market from "~/routes/market";
import MarketData from "~/routes/market-data";
import Placeholder from "~/routes/placeholder";
import Protected, { clientLoader as protectedLoader } from "~/routes/protected";
import Spot from "~/routes/spot";
import Futures from "~/routes/futures";

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
        ...["login", "regist", "about", "event"].map((p) => ({ path: p, Component: Placeholder })),
        {
          id: "protected",
          Component: Protected,
          loader: protectedLoader,
          children: ["dashboard", "wallet", "history"].map((p) => ({ path: p, Component: Placeholder })),
        },
      ],
    },
  ]);
  return render(<Stub initialEntries={[path]} />);
}

import { render } from "@testing-library/react";
import { createRoutesStub, Outlet } from "react-router";
import { AppShell } from "~/components/AppShell";
import { AppProviders } from "~/providers";
import Futures from "~/routes/futures";
import Home, { clientLoader as homeLoader } from "~/routes/home";
import Spot from "~/routes/spot";

function Shell() {
  return (
    <AppProviders>
      <AppShell>
        <Outlet />
      </AppShell>
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
        { path: "spot/:exchange/:symbol?", Component: Spot },
        { path: "futures/:exchange/:symbol?", Component: Futures },
      ],
    },
  ]);
  return render(<Stub initialEntries={[path]} />);
}

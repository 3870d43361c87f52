import { render } from "@testing-library/react";
import type { ComponentType } from "react";
import { createRoutesStub, useLocation } from "react-router";
import { AppProviders } from "~/providers";

function Where() {
  const { pathname, search } = useLocation();
  return <output data-testid="where">{`${pathname}${search}`}</output>;
}

// Renders screens at their paths in memory; other paths show where the app went.
export function renderAt(path: string, screens: Record<string, ComponentType>) {
  const Stub = createRoutesStub([
    ...Object.entries(screens).map(([p, C]) => ({
      path: p,
      Component: () => (
        <AppProviders>
          <C />
          <Where />
        </AppProviders>
      ),
    })),
    { path: "*", Component: Where },
  ]);
  return render(<Stub initialEntries={[path]} />);
}

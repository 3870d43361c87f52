import { type RouteConfig, index, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx"),
  route("spot/:exchange/:symbol?", "routes/spot.tsx"),
  route("futures/:exchange/:symbol?", "routes/futures.tsx"),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;

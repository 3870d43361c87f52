import { type RouteConfig, index, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx"),
  route("spot/:exchange/:symbol?", "routes/trade.spot.tsx"),
  route("futures/:exchange/:symbol?", "routes/trade.futures.tsx"),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;

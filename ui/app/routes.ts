import { type RouteConfig, index, layout, route } from "@react-router/dev/routes";

// Pages that later work fills show a placeholder until then.
const open = ["login", "regist", "forgotPassword_A", "forgotPassword_B", "otp", "otpauth", "bindPsd", "about", "event"];
const protectedPages = ["dashboard", "wallet", "history"];

export default [
  index("routes/home.tsx"),
  route("market", "routes/market.tsx"),
  route("marketData", "routes/market-data.tsx"),
  route("spot/:exchange/:symbol?", "routes/trade.spot.tsx"),
  route("futures/:exchange/:symbol?", "routes/trade.futures.tsx"),
  ...open.map((p) => route(p, "routes/placeholder.tsx", { id: `page-${p}` })),
  route("eventDetail/:eventId", "routes/placeholder.tsx", { id: "page-eventDetail" }),
  // Login required: without a stored session these redirect to /login.
  layout("routes/protected.tsx", protectedPages.map((p) => route(p, "routes/placeholder.tsx", { id: `page-${p}` }))),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;

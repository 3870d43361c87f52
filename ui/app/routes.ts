import { type RouteConfig, index, layout, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx"),
  route("market", "routes/market.tsx"),
  route("about", "routes/about.tsx"),
  route("marketData", "routes/market-data.tsx"),
  route("spot/:exchange/:symbol?", "routes/trade.spot.tsx"),
  route("futures/:exchange/:symbol?", "routes/trade.futures.tsx"),
  // Sign-in screens, rendered from Kratos' flows (features/auth).
  route("login", "routes/auth.login.tsx"),
  route("otpauth", "routes/auth.otpauth.tsx"),
  route("regist", "routes/auth.regist.tsx"),
  route("otp", "routes/auth.otp.tsx", { id: "page-otp" }),
  route("verification", "routes/auth.otp.tsx", { id: "page-verification" }),
  route("forgotPassword_A", "routes/auth.forgot-a.tsx"),
  route("forgotPassword_B", "routes/auth.forgot-b.tsx"),
  route("bindPsd", "routes/auth.bind-password.tsx"),
  route("error", "routes/auth.error.tsx"),
  // Demo mode: the codes sent by e-mail and SMS.
  route("inbox", "routes/inbox.tsx"),
  // Events (features/content): the list and one event.
  route("event", "features/content/EventsPage.tsx"),
  route("eventDetail/:eventId", "features/content/EventDetailPage.tsx"),
  // Login required: /api/v1/me decides (routes/protected.tsx).
  layout("routes/protected.tsx", [
    // History: the five sub-pages of features/history, chosen by ?page=.
    route("history", "routes/history.tsx", { id: "page-history" }),
    // Wallet: overview, deposit, withdraw, convert, transfer, exchange, gift (features/wallet), ?page= picks one.
    route("wallet", "routes/wallet.tsx", { id: "page-wallet" }),
    // Dashboard: Profile, Security, Reward (features/dashboard); /dashboard/security
    // is Kratos' settings UI URL and opens the Security sub-page.
    route("dashboard", "routes/dashboard.tsx", { id: "page-dashboard" }),
    route("dashboard/security", "routes/dashboard.tsx", { id: "page-dashboard-security" }),
  ]),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;

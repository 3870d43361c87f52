import { lingui } from "@lingui/vite-plugin";
import { defineConfig } from "vitest/config";
import { linguiMacroPlugin } from "./tools/lingui-macro-plugin.ts";

export default defineConfig({
  plugins: [linguiMacroPlugin(), lingui()],
  resolve: { tsconfigPaths: true },
  test: {
    environment: "jsdom",
    include: ["app/**/*.test.{ts,tsx}", "tools/**/*.test.ts"],
    setupFiles: ["./app/test/setup.ts"],
    restoreMocks: true,
    // A bound for a stuck test, not a budget: tests wait for conditions (see app/test/setup.ts).
    testTimeout: 60_000,
  },
});

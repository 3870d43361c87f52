import { reactRouter } from "@react-router/dev/vite";
import { lingui } from "@lingui/vite-plugin";
import { defineConfig } from "vite";
import { linguiMacroPlugin } from "./tools/lingui-macro-plugin.ts";

// EXHUB_API_PROXY (e.g. http://127.0.0.1:8090) lets `npm run dev` forward
// /api and /.ory to a running BFF; the edge does this in the real stack.
const apiProxy = process.env.EXHUB_API_PROXY;

export default defineConfig(({ command }) => ({
  plugins: [
    linguiMacroPlugin(),
    // .po catalogs are compiled to JS when imported; a missing Japanese
    // translation fails the production build.
    lingui({ failOnMissing: command === "build", failOnCompileError: true }),
    reactRouter(),
  ],
  resolve: { tsconfigPaths: true },
  server: {
    host: "127.0.0.1",
    proxy: apiProxy
      ? {
          "/api": { target: apiProxy, ws: true },
          "/.ory": { target: apiProxy },
        }
      : undefined,
  },
  preview: { host: "127.0.0.1" },
}));

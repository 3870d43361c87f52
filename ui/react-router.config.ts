import type { Config } from "@react-router/dev/config";

// SPA mode: no server rendering. Only the root route is prerendered into
// build/client/index.html; the edge serves that file for every unknown path.
export default {
  appDirectory: "app",
  buildDirectory: "build",
  ssr: false,
  future: {
    v8_viteEnvironmentApi: true,
    v8_passThroughRequests: true,
    v8_trailingSlashAwareDataRequests: true,
  },
} satisfies Config;

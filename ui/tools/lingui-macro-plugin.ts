import { transformAsync } from "@babel/core";
import linguiMacro from "@lingui/babel-plugin-lingui-macro";
import type { Plugin } from "vite";

// React Router's Vite plugin replaces @vitejs/plugin-react, so there is no
// Babel pass in the pipeline. This plugin runs only the Lingui macro through
// Babel for modules that import a macro, before any other transform.
const SOURCE = /\.(?:[cm]?[jt]sx?)$/;
const MACRO_IMPORT = /from\s+["']@lingui\/(?:core|react)\/macro["']|from\s+["']@lingui\/macro["']/;

export function linguiMacroPlugin(): Plugin {
  return {
    name: "exhub:lingui-macro",
    enforce: "pre",
    async transform(code, id) {
      // Module ids may carry a query such as ?route-chunk=clientLoader.
      const file = id.split("?", 1)[0] ?? id;
      if (file.includes("/node_modules/") || !SOURCE.test(file)) return null;
      if (!MACRO_IMPORT.test(code)) return null;
      const isTS = /\.[cm]?tsx?$/.test(file);
      const isJSX = /x$/.test(file) || !isTS;
      const result = await transformAsync(code, {
        filename: file,
        babelrc: false,
        configFile: false,
        sourceMaps: true,
        parserOpts: {
          plugins: [...(isTS ? (["typescript"] as const) : []), ...(isJSX ? (["jsx"] as const) : [])],
        },
        plugins: [[linguiMacro, {}]],
      });
      if (!result?.code) return null;
      return { code: result.code, map: result.map ?? null };
    },
  };
}

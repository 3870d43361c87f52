import { describe, expect, it } from "vitest";
import { chunkFailure } from "./chunk-error";

describe("chunkFailure", () => {
  it("recognises each browser's wording and names the chunk", () => {
    expect(
      chunkFailure(new TypeError("Failed to fetch dynamically imported module: https://exhub.test/assets/trade.spot-B1x_9aZq.js")),
    ).toEqual({ id: "trade.spot", css: false, type: "error", address: "https://exhub.test/assets/trade.spot-B1x_9aZq.js" });
    expect(chunkFailure(new TypeError("error loading dynamically imported module: http://h/assets/market-Cq2aZ81x.js"))).toMatchObject({
      id: "market",
      css: false,
    });
    expect(chunkFailure(new TypeError("Importing a module script failed."))).toEqual({ id: "?", css: false, type: "error", address: "" });
    expect(chunkFailure(new Error("Unable to preload CSS for /assets/trade-D9fj2kQp.css"))).toEqual({
      id: "trade",
      css: true,
      type: "error",
      address: "/assets/trade-D9fj2kQp.css",
    });
  });

  it("reads a bundler's ChunkLoadError with its type and request", () => {
    const e = Object.assign(new Error("Loading chunk 12 failed.\n(timeout: https://h/12.js)"), {
      name: "ChunkLoadError",
      type: "timeout",
      request: "https://h/12.js",
    });
    expect(chunkFailure(e)).toEqual({ id: "12", css: false, type: "timeout", address: "https://h/12.js" });
    expect(chunkFailure(new Error("Loading CSS chunk login failed."))).toMatchObject({ id: "login", css: true });
  });

  it("leaves other errors alone", () => {
    expect(chunkFailure(new Error("Cannot read properties of undefined"))).toBeNull();
    expect(chunkFailure(new TypeError("Failed to fetch"))).toBeNull();
    expect(chunkFailure("Failed to fetch dynamically imported module")).toBeNull();
    expect(chunkFailure(null)).toBeNull();
  });
});

import { act, render, renderHook, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FAVORITES_KEY,
  listFavorites,
  localFavoritesStore,
  toggleFavorite,
} from "~/lib/favorites";
import { clearSession, resetSession, setMember } from "~/lib/session";
import { I18nProvider } from "@lingui/react";
import { changeLocale, i18n } from "~/i18n";
import { ThemeProvider } from "~/theme";
import { choiceCounts, THEME_KEY } from "~/preferences";
import { fakeApi, jsonResponse, member } from "./testing/fake-api";
import {
  MERGED_KEY_PREFIX,
  MemberSync,
  readPreferences,
  resetMemberSync,
  serverFavoritesStore,
  updatePreferences,
  usePreferencesStatus,
} from "./sync";

function usePreferencesStatusValue() {
  return renderHook(() => usePreferencesStatus(member.id)).result.current;
}

const k = (exchange: string, market_type: string, symbol: string) => ({
  exchange,
  market_type,
  symbol,
});

beforeEach(() => {
  resetSession();
  resetMemberSync();
});
afterEach(() => {
  resetSession();
  resetMemberSync();
});

describe("server favourites", () => {
  it("merges this browser's favourites once per member, then reads the server's list", async () => {
    window.localStorage.setItem(
      FAVORITES_KEY,
      JSON.stringify(["binance:SPOT:BTCUSDT"]),
    );
    let server = [k("okx", "SWAP", "BTC-USDT-SWAP")];
    const api = fakeApi({
      "POST /api/v1/me/favorites:merge": (c) => {
        server = [
          ...server,
          ...(c.body as { favorites: typeof server }).favorites,
        ];
        return jsonResponse({
          added: 1,
          present: 0,
          dropped: 0,
          favorites: server,
        });
      },
      "GET /api/v1/me/favorites": () => jsonResponse({ favorites: server }),
    });
    const s = serverFavoritesStore("m1");
    await s.load();
    expect([...s.list()].sort()).toEqual([
      "binance:SPOT:BTCUSDT",
      "okx:SWAP:BTC-USDT-SWAP",
    ]);
    expect(
      api.calls
        .filter((c) => c.path === "/api/v1/me/favorites:merge")
        .map((c) => c.body),
    ).toEqual([{ favorites: [k("binance", "SPOT", "BTCUSDT")] }]);
    expect(
      JSON.parse(window.localStorage.getItem(MERGED_KEY_PREFIX + "m1")!),
    ).toEqual(["binance:SPOT:BTCUSDT"]);

    await serverFavoritesStore("m1").load();
    expect(
      api.calls.filter((c) => c.path === "/api/v1/me/favorites:merge"),
    ).toHaveLength(1);

    // A favourite starred in this browser later is merged at the next load, alone.
    window.localStorage.setItem(
      FAVORITES_KEY,
      JSON.stringify(["binance:SPOT:BTCUSDT", "okx:SPOT:ETH-USDT"]),
    );
    await serverFavoritesStore("m1").load();
    expect(
      api.calls
        .filter((c) => c.path === "/api/v1/me/favorites:merge")
        .map((c) => c.body),
    ).toEqual([
      { favorites: [k("binance", "SPOT", "BTCUSDT")] },
      { favorites: [k("okx", "SPOT", "ETH-USDT")] },
    ]);
  });

  it("takes a merge marked by an older build as covering the local favourites of the time", async () => {
    window.localStorage.setItem(
      FAVORITES_KEY,
      JSON.stringify(["binance:SPOT:BTCUSDT"]),
    );
    window.localStorage.setItem(MERGED_KEY_PREFIX + "m4", "1");
    const api = fakeApi({
      "GET /api/v1/me/favorites": () => jsonResponse({ favorites: [] }),
    });
    await serverFavoritesStore("m4").load();
    expect(api.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
      "GET /api/v1/me/favorites",
    ]);
    expect(
      JSON.parse(window.localStorage.getItem(MERGED_KEY_PREFIX + "m4")!),
    ).toEqual(["binance:SPOT:BTCUSDT"]);
  });

  it("sends the stars changed before the member's list is read once it is", async () => {
    window.localStorage.setItem(
      FAVORITES_KEY,
      JSON.stringify(["binance:SPOT:BTCUSDT"]),
    );
    window.localStorage.setItem(
      MERGED_KEY_PREFIX + "m5",
      JSON.stringify(["binance:SPOT:BTCUSDT"]),
    );
    let server = [
      k("binance", "SPOT", "BTCUSDT"),
      k("okx", "SWAP", "BTC-USDT-SWAP"),
    ];
    let answer!: () => void;
    const listed = new Promise<void>((resolve) => (answer = resolve));
    const api = fakeApi({
      "GET /api/v1/me/favorites": async () => {
        await listed;
        return jsonResponse({ favorites: server });
      },
      "POST /api/v1/me/favorites": (c) => {
        server = [...server, c.body as ReturnType<typeof k>];
        return jsonResponse({ changed: true });
      },
      "DELETE /api/v1/me/favorites": (c) => {
        server = server.filter((f) => f.symbol !== c.query.get("symbol"));
        return jsonResponse({ changed: true });
      },
    });
    const s = serverFavoritesStore("m5");
    const loading = s.load();
    s.add("okx:SPOT:ETH-USDT");
    s.remove("binance:SPOT:BTCUSDT");
    // Shown at once, over this browser's list, which stays as it was.
    expect([...s.list()]).toEqual(["okx:SPOT:ETH-USDT"]);
    expect([...localFavoritesStore().list()]).toEqual(["binance:SPOT:BTCUSDT"]);
    expect(api.calls.filter((c) => c.method !== "GET")).toEqual([]);

    answer();
    await loading;
    await waitFor(() =>
      expect(server).toEqual([
        k("okx", "SWAP", "BTC-USDT-SWAP"),
        k("okx", "SPOT", "ETH-USDT"),
      ]),
    );
    expect([...s.list()].sort()).toEqual([
      "okx:SPOT:ETH-USDT",
      "okx:SWAP:BTC-USDT-SWAP",
    ]);
  });

  it("gives the changes made while loading to this browser's list when the load fails", async () => {
    window.localStorage.setItem(MERGED_KEY_PREFIX + "m6", "[]");
    fakeApi({
      "GET /api/v1/me/favorites": () =>
        jsonResponse({ title: "Service Unavailable", status: 503 }, 503),
    });
    const s = serverFavoritesStore("m6");
    const loading = s.load();
    s.add("okx:SPOT:ETH-USDT");
    await expect(loading).rejects.toThrow();
    s.keepLocal();
    expect([...localFavoritesStore().list()]).toEqual(["okx:SPOT:ETH-USDT"]);
  });

  it("does not mark the merge done when it failed", async () => {
    window.localStorage.setItem(
      FAVORITES_KEY,
      JSON.stringify(["binance:SPOT:BTCUSDT"]),
    );
    fakeApi({
      "POST /api/v1/me/favorites:merge": () =>
        jsonResponse({ title: "Service Unavailable", status: 503 }, 503),
    });
    await expect(serverFavoritesStore("m2").load()).rejects.toThrow();
    expect(window.localStorage.getItem(MERGED_KEY_PREFIX + "m2")).toBeNull();
  });

  it("adds and removes with the market in the body or the query, and rolls back a refused change", async () => {
    let server: ReturnType<typeof k>[] = [];
    let refuse = false;
    const api = fakeApi({
      "GET /api/v1/me/favorites": () => jsonResponse({ favorites: server }),
      "POST /api/v1/me/favorites": (c) => {
        if (refuse)
          return jsonResponse(
            {
              title: "Unprocessable Entity",
              status: 422,
              detail: "at most 500 favorites",
            },
            422,
          );
        server = [...server, c.body as ReturnType<typeof k>];
        return jsonResponse({ changed: true });
      },
      "DELETE /api/v1/me/favorites": (c) => {
        server = server.filter((f) => f.symbol !== c.query.get("symbol"));
        return jsonResponse({ changed: true });
      },
    });
    window.localStorage.setItem(MERGED_KEY_PREFIX + "m3", "[]");
    const s = serverFavoritesStore("m3");
    await s.load();
    let changes = 0;
    s.subscribe(() => changes++);
    s.add("binance:SWAP:ETH/USDT");
    expect(s.list().has("binance:SWAP:ETH/USDT")).toBe(true);
    await waitFor(() =>
      expect(server).toEqual([k("binance", "SWAP", "ETH/USDT")]),
    );
    s.remove("binance:SWAP:ETH/USDT");
    await waitFor(() => expect(server).toEqual([]));
    expect(api.calls.find((c) => c.method === "DELETE")!.query.toString()).toBe(
      "exchange=binance&market_type=SWAP&symbol=ETH%2FUSDT",
    );

    refuse = true;
    s.add("okx:SPOT:BTC-USDT");
    expect(s.list().has("okx:SPOT:BTC-USDT")).toBe(true);
    await waitFor(() => expect(s.list().has("okx:SPOT:BTC-USDT")).toBe(false));
    expect(changes).toBeGreaterThanOrEqual(4);
  });
});

describe("member sync", () => {
  it("uses the member's server favourites once signed in and the local ones again after sign-out", async () => {
    window.localStorage.setItem(
      FAVORITES_KEY,
      JSON.stringify(["binance:SPOT:BTCUSDT"]),
    );
    window.localStorage.setItem(MERGED_KEY_PREFIX + member.id, "1");
    fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/favorites": () =>
        jsonResponse({ favorites: [k("okx", "SWAP", "ETH-USDT-SWAP")] }),
      "POST /api/v1/me/favorites": () => jsonResponse({ changed: true }),
      "GET /api/v1/me/preferences": () =>
        jsonResponse({
          version: 3,
          preferences: {
            theme: "light",
            language: "en",
            sub_pages: { dashboard: "security" },
          },
        }),
    });
    setMember(member);
    render(
      <I18nProvider i18n={i18n}>
        <ThemeProvider>
          <MemberSync />
        </ThemeProvider>
      </I18nProvider>,
    );
    await waitFor(() =>
      expect([...listFavorites()]).toEqual(["okx:SWAP:ETH-USDT-SWAP"]),
    );
    await waitFor(() =>
      expect(document.documentElement.getAttribute("data-theme")).toBe("light"),
    );
    expect(window.localStorage.getItem(THEME_KEY)).toBe("light");
    expect(window.localStorage.getItem("exhub.dashboard.page")).toBe(
      "security",
    );
    toggleFavorite("okx:SPOT:BTC-USDT");
    // The local list is untouched by a member's change.
    expect([...localFavoritesStore().list()]).toEqual(["binance:SPOT:BTCUSDT"]);

    clearSession();
    await waitFor(() =>
      expect([...listFavorites()]).toEqual(["binance:SPOT:BTCUSDT"]),
    );
  });

  it("keeps a star clicked right after sign-in, before the member's list is read", async () => {
    window.localStorage.setItem(MERGED_KEY_PREFIX + member.id, "[]");
    let server = [k("okx", "SWAP", "ETH-USDT-SWAP")];
    let answer!: () => void;
    const listed = new Promise<void>((resolve) => (answer = resolve));
    const api = fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/favorites": async () => {
        await listed;
        return jsonResponse({ favorites: server });
      },
      "POST /api/v1/me/favorites": (c) => {
        server = [...server, c.body as ReturnType<typeof k>];
        return jsonResponse({ changed: true });
      },
      "GET /api/v1/me/preferences": () =>
        jsonResponse({ version: 1, preferences: {} }),
    });
    setMember(member);
    render(
      <I18nProvider i18n={i18n}>
        <ThemeProvider>
          <MemberSync />
        </ThemeProvider>
      </I18nProvider>,
    );
    await waitFor(() =>
      expect(
        api.calls.some(
          (c) => c.method === "GET" && c.path === "/api/v1/me/favorites",
        ),
      ).toBe(true),
    );
    toggleFavorite("binance:SPOT:BTCUSDT");
    expect(listFavorites().has("binance:SPOT:BTCUSDT")).toBe(true);
    answer();
    await waitFor(() =>
      expect(server).toEqual([
        k("okx", "SWAP", "ETH-USDT-SWAP"),
        k("binance", "SPOT", "BTCUSDT"),
      ]),
    );
    await waitFor(() =>
      expect([...listFavorites()].sort()).toEqual([
        "binance:SPOT:BTCUSDT",
        "okx:SWAP:ETH-USDT-SWAP",
      ]),
    );
    // The visitor's list in this browser did not get the member's star.
    expect([...localFavoritesStore().list()]).toEqual([]);
  });

  it("saves the browser's theme and language for a member who never saved preferences", async () => {
    document.documentElement.setAttribute("data-theme", "dark");
    const api = fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/favorites": () => jsonResponse({ favorites: [] }),
      "GET /api/v1/me/preferences": () =>
        jsonResponse({ version: 0, preferences: {} }),
      "PUT /api/v1/me/preferences": (c) =>
        jsonResponse({
          version: 1,
          preferences: (c.body as { preferences: unknown }).preferences,
        }),
    });
    setMember(member);
    render(
      <I18nProvider i18n={i18n}>
        <ThemeProvider>
          <MemberSync />
        </ThemeProvider>
      </I18nProvider>,
    );
    await waitFor(() =>
      expect(api.calls.some((c) => c.method === "PUT")).toBe(true),
    );
    expect(api.calls.find((c) => c.method === "PUT")!.body).toEqual({
      version: 0,
      preferences: { theme: "dark", language: "en" },
    });
  });
});

// The member's stored preferences on a fake server that checks If-Match like
// the BFF; held (optional) delays the read.
function storedPreferences(doc: Record<string, unknown>, version: number, held?: Promise<void>) {
  const stored = { doc, version };
  const routes = {
    "GET /api/v1/me": () => jsonResponse(member),
    "GET /api/v1/me/favorites": () => jsonResponse({ favorites: [] }),
    "GET /api/v1/me/preferences": async () => {
      await held;
      return jsonResponse({ version: stored.version, preferences: stored.doc });
    },
    "PUT /api/v1/me/preferences": (c: { headers: Headers; body: unknown }) => {
      if (c.headers.get("If-Match") !== `"v${stored.version}"`)
        return jsonResponse({ title: "Precondition Failed", status: 412 }, 412);
      stored.version++;
      stored.doc = (c.body as { preferences: Record<string, unknown> }).preferences;
      return jsonResponse({ version: stored.version, preferences: stored.doc });
    },
  };
  return { stored, api: fakeApi(routes) };
}

describe("a choice made before the stored preferences arrive", () => {
  afterEach(async () => {
    await changeLocale("en");
  });

  it("keeps the language chosen right after sign-in and writes it back with If-Match", async () => {
    document.documentElement.setAttribute("data-theme", "dark");
    await changeLocale("en");
    let answer!: () => void;
    // The member's stored preferences are read slowly.
    const held = new Promise<void>((resolve) => (answer = resolve));
    const { stored, api } = storedPreferences({ theme: "light", language: "en" }, 4, held);
    setMember(member);
    render(
      <I18nProvider i18n={i18n}>
        <ThemeProvider>
          <MemberSync />
        </ThemeProvider>
      </I18nProvider>,
    );
    await waitFor(() =>
      expect(
        api.calls.some(
          (c) => c.method === "GET" && c.path === "/api/v1/me/preferences",
        ),
      ).toBe(true),
    );
    // The member switches to Japanese while the read is in flight...
    await act(() => changeLocale("ja"));
    // ...then the stored preferences (English, light) arrive.
    answer();
    await waitFor(() => expect(stored.version).toBe(5));
    const put = api.calls.find((c) => c.method === "PUT")!;
    expect(put.headers.get("If-Match")).toBe('"v4"');
    // The stored theme applies; the language chosen here wins and is saved.
    expect(stored.doc).toEqual({ theme: "light", language: "ja" });
    expect(i18n.locale).toBe("ja");
    expect(document.documentElement.lang).toBe("ja");
    expect(document.documentElement.getAttribute("data-theme")).toBe("light");
    expect(api.calls.filter((c) => c.method === "PUT")).toHaveLength(1);
  });

  it("keeps a language chosen after the member was seen but before this code mounted", async () => {
    document.documentElement.setAttribute("data-theme", "dark");
    await changeLocale("en");
    const { stored, api } = storedPreferences({ theme: "dark", language: "en" }, 7);
    setMember(member);
    // The app saw the member (its providers took the count), then the member
    // chose Japanese while this component's code was still loading.
    const signedIn = { memberId: member.id, choices: choiceCounts() };
    await changeLocale("ja");
    render(
      <I18nProvider i18n={i18n}>
        <ThemeProvider>
          <MemberSync signedIn={signedIn} />
        </ThemeProvider>
      </I18nProvider>,
    );
    await waitFor(() => expect(usePreferencesStatusValue()).toBe("ready"));
    expect(i18n.locale).toBe("ja");
    expect(stored.doc).toEqual({ theme: "dark", language: "ja" });
    expect(api.calls.filter((c) => c.method === "PUT")).toHaveLength(1);
  });

  it("applies the stored language when nothing was chosen meanwhile, without writing", async () => {
    document.documentElement.setAttribute("data-theme", "dark");
    await changeLocale("en");
    const api = fakeApi({
      "GET /api/v1/me": () => jsonResponse(member),
      "GET /api/v1/me/favorites": () => jsonResponse({ favorites: [] }),
      "GET /api/v1/me/preferences": () =>
        jsonResponse({
          version: 2,
          preferences: { theme: "dark", language: "ja" },
        }),
    });
    setMember(member);
    render(
      <I18nProvider i18n={i18n}>
        <ThemeProvider>
          <MemberSync />
        </ThemeProvider>
      </I18nProvider>,
    );
    await waitFor(() => expect(i18n.locale).toBe("ja"));
    await waitFor(() =>
      expect(usePreferencesStatusValue()).toBe("ready"),
    );
    expect(api.calls.filter((c) => c.method === "PUT")).toEqual([]);
  });
});

describe("updatePreferences", () => {
  it("retries once on 412 with the version read again, keeping the other keys", async () => {
    let version = 1;
    let doc: Record<string, unknown> = {
      theme: "dark",
      sub_pages: { history: "funding_history" },
    };
    const puts: { version: number }[] = [];
    fakeApi({
      "GET /api/v1/me/preferences": () =>
        jsonResponse({ version, preferences: doc }),
      "PUT /api/v1/me/preferences": (c) => {
        const b = c.body as {
          version: number;
          preferences: Record<string, unknown>;
        };
        puts.push(b);
        if (b.version !== version)
          return jsonResponse(
            { title: "Precondition Failed", status: 412 },
            412,
          );
        version++;
        doc = b.preferences;
        return jsonResponse({ version, preferences: doc });
      },
    });
    await readPreferences("m1");
    // Another device saves first.
    version = 5;
    doc = { theme: "light", sub_pages: { history: "funding_history" } };
    await updatePreferences({ sub_pages: { dashboard: "self_referral" } });
    expect(puts.map((p) => p.version)).toEqual([1, 5]);
    expect(doc).toEqual({
      theme: "light",
      sub_pages: { history: "funding_history", dashboard: "self_referral" },
    });
    expect(version).toBe(6);
  });

  it("does nothing for a visitor", async () => {
    const api = fakeApi({});
    await updatePreferences({ theme: "light" });
    expect(api.calls).toEqual([]);
  });
});

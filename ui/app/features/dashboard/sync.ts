import { useLingui } from "@lingui/react/macro";
import { useEffect, useRef, useSyncExternalStore } from "react";
import { SUBPAGE_KEYS } from "~/components/Nav";
import { applyLocale, requestedLocale } from "~/i18n";
import { isApiError } from "~/lib/errors";
import {
  FAVORITES_KEY,
  favoriteId,
  localFavoritesStore,
  setFavoritesStore,
  type FavoritesStore,
} from "~/lib/favorites";
import { useMember } from "~/lib/session";
import {
  choiceCounts,
  isLocale,
  isTheme,
  writeStored,
  type ChoiceCounts,
} from "~/preferences";
import { useTheme } from "~/theme";
import {
  call,
  paths,
  type FavoriteKey,
  type Preferences,
  type PreferencesDoc,
} from "./api";

// A signed-in member's favourites and preferences live on the server
// (/api/v1/me/favorites, /api/v1/me/preferences); a visitor's stay in this
// browser. <MemberSync/> switches between the two when the session changes:
// on sign-in the member's store takes over from the local one behind the
// favourites interface at once (this browser's favourites not yet merged for
// the member are merged into the server list, and stars changed before that
// list is read are sent after it), the stored theme, language and remembered
// sub-pages are applied, and later changes are saved back.

// Under MERGED_KEY_PREFIX + member id: the local favourites already merged
// into that member's list (a sorted JSON array; "1" from older builds means
// every local favourite of the time).
export const MERGED_KEY_PREFIX = "exhub.favorites.merged.";

// At most this many star changes wait for the member's list to be read (the
// server keeps at most 500 favourites).
export const MAX_PENDING_FAVORITES = 500;

export function toKey(id: string): FavoriteKey | null {
  const [exchange, market_type, ...rest] = id.split(":");
  const symbol = rest.join(":");
  return exchange && market_type && symbol
    ? { exchange, market_type, symbol }
    : null;
}

export function fromKey(k: FavoriteKey): string {
  return favoriteId(k.exchange, k.market_type, k.symbol);
}

function favoritesQuery(k: FavoriteKey): string {
  return new URLSearchParams({
    exchange: k.exchange,
    market_type: k.market_type,
    symbol: k.symbol,
  }).toString();
}

// The local ids already merged for a member.
function readMerged(key: string, local: readonly string[]): Set<string> {
  let raw: string | null = null;
  try {
    raw = window.localStorage.getItem(key);
  } catch {
    raw = null;
  }
  if (raw === "1") return new Set(local);
  try {
    const v: unknown = raw ? JSON.parse(raw) : [];
    if (Array.isArray(v))
      return new Set(v.filter((x): x is string => typeof x === "string"));
  } catch {
    // a broken entry counts as nothing merged
  }
  return new Set();
}

export type ServerFavorites = FavoritesStore & {
  // Merges this browser's favourites not yet merged for the member, reads the
  // member's list, then sends the changes made before it was read.
  load(): Promise<void>;
  // After a failed load: the changes made meanwhile go to this browser's list
  // (which stays in use).
  keepLocal(): void;
};

// The server-backed FavoritesStore of one member. Changes show at once and
// are sent in order; a refused change is rolled back by reading the list again.
// Until load() has read the list the store shows this browser's favourites
// with the member's changes over them, and keeps those changes (bounded) to
// send once the list is read.
export function serverFavoritesStore(
  memberId: string,
  opts: { local?: FavoritesStore; onError?: (e: unknown) => void } = {},
): ServerFavorites {
  const local = opts.local ?? localFavoritesStore(FAVORITES_KEY);
  const listeners = new Set<() => void>();
  let set: ReadonlySet<string> = new Set();
  let loaded = false;
  // id -> starred (true) or unstarred (false), the last change of each id.
  const pending = new Map<string, boolean>();
  let overlay: { base: ReadonlySet<string>; set: ReadonlySet<string> } | null =
    null;
  let queue: Promise<unknown> = Promise.resolve();
  const emit = () => {
    for (const l of listeners) l();
  };
  const replace = (next: ReadonlySet<string>) => {
    set = next;
    emit();
  };
  // Before the list is read: the local list with the pending changes.
  const early = (): ReadonlySet<string> => {
    const base = local.list();
    if (overlay && overlay.base === base) return overlay.set;
    const next = new Set(base);
    for (const [id, on] of pending) {
      if (on) next.add(id);
      else next.delete(id);
    }
    overlay = { base, set: next };
    return next;
  };
  const change = (id: string, on: boolean) => {
    if (early().has(id) === on) return;
    if (!pending.has(id) && pending.size >= MAX_PENDING_FAVORITES) return;
    pending.set(id, on);
    overlay = null;
    emit();
  };
  const read = async () => {
    const r = await call<{ favorites?: FavoriteKey[] }>("GET", paths.favorites);
    replace(new Set((r?.favorites ?? []).map(fromKey)));
  };
  const send = (what: () => Promise<unknown>) => {
    queue = queue.then(what).catch(async (e: unknown) => {
      opts.onError?.(e);
      await read().catch(() => undefined);
    });
    return queue;
  };
  const store: ServerFavorites = {
    list: () => (loaded ? set : early()),
    add(id) {
      const k = toKey(id);
      if (!k) return;
      if (!loaded) return change(id, true);
      if (set.has(id)) return;
      replace(new Set(set).add(id));
      void send(() => call("POST", paths.favorites, k));
    },
    remove(id) {
      const k = toKey(id);
      if (!k) return;
      if (!loaded) return change(id, false);
      if (!set.has(id)) return;
      const next = new Set(set);
      next.delete(id);
      replace(next);
      void send(() =>
        call("DELETE", `${paths.favorites}?${favoritesQuery(k)}`),
      );
    },
    subscribe(l) {
      listeners.add(l);
      // Another tab's change of the local list shows until the member's is read.
      const off = local.subscribe(() => {
        if (!loaded) l();
      });
      return () => {
        listeners.delete(l);
        off();
      };
    },
    async load() {
      const mergedKey = MERGED_KEY_PREFIX + memberId;
      const mine = [...local.list()].sort();
      const merged = readMerged(mergedKey, mine);
      const fresh = mine
        .filter((id) => !merged.has(id))
        .map(toKey)
        .filter((k): k is FavoriteKey => k !== null);
      if (fresh.length > 0)
        await call("POST", `${paths.favorites}:merge`, { favorites: fresh });
      writeStored(mergedKey, JSON.stringify(mine));
      await read();
      if (loaded) return;
      loaded = true;
      const changes = [...pending];
      pending.clear();
      overlay = null;
      for (const [id, on] of changes) {
        if (on) store.add(id);
        else store.remove(id);
      }
      emit();
    },
    keepLocal() {
      if (loaded) return;
      for (const [id, on] of pending) {
        if (on) local.add(id);
        else local.remove(id);
      }
      pending.clear();
      overlay = null;
    },
  };
  return store;
}

// Preferences: the last document read or written, and its version.
let prefs: { memberId: string; version: number; doc: PreferencesDoc } | null =
  null;
let prefsQueue: Promise<unknown> = Promise.resolve();

// Reads the member's preferences (and their version) into the module.
export async function readPreferences(
  memberId: string,
): Promise<NonNullable<typeof prefs>> {
  const r = await call<Preferences>("GET", paths.preferences);
  prefs = { memberId, version: r?.version ?? 0, doc: r?.preferences ?? {} };
  return prefs;
}

function merge(doc: PreferencesDoc, patch: PreferencesDoc): PreferencesDoc {
  return {
    ...doc,
    ...patch,
    alerts: patch.alerts ? { ...doc.alerts, ...patch.alerts } : doc.alerts,
    sub_pages: patch.sub_pages
      ? { ...doc.sub_pages, ...patch.sub_pages }
      : doc.sub_pages,
  };
}

// Saves a change of the signed-in member's preferences (no-op when signed
// out). Writes are sent one at a time with the version last seen; a stale
// version (409 or 412) reads the document again and retries once.
export function updatePreferences(patch: PreferencesDoc): Promise<void> {
  const p = prefs;
  if (!p) return Promise.resolve();
  const run = async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const cur =
        prefs && prefs.memberId === p.memberId
          ? prefs
          : await readPreferences(p.memberId);
      const doc = merge(cur.doc, patch);
      try {
        const r = await call<Preferences>(
          "PUT",
          paths.preferences,
          { version: cur.version, preferences: doc },
          { "If-Match": `"v${cur.version}"` },
        );
        prefs = {
          memberId: p.memberId,
          version: r?.version ?? cur.version + 1,
          doc: r?.preferences ?? doc,
        };
        return;
      } catch (e) {
        if (
          attempt === 0 &&
          isApiError(e) &&
          (e.status === 409 || e.status === 412)
        ) {
          await readPreferences(p.memberId);
          continue;
        }
        throw e;
      }
    }
  };
  const next = prefsQueue.then(run);
  prefsQueue = next.catch(() => undefined);
  return next;
}

// The remembered sub-page of /wallet, /dashboard or /history: this browser,
// and the member's preferences when signed in.
export function rememberSubPage(
  page: keyof typeof SUBPAGE_KEYS,
  sub: string,
): void {
  writeStored(SUBPAGE_KEYS[page], sub);
  void updatePreferences({ sub_pages: { [page]: sub } }).catch(() => undefined);
}

export function preferencesSnapshot(): PreferencesDoc | null {
  return prefs?.doc ?? null;
}

// Whether a member's stored preferences are applied yet: "loading" from
// sign-in until they are (or could not be) read; "none" for anyone else.
export type PreferencesStatus = "none" | "loading" | "ready" | "failed";
let prefsStatus: { memberId: string | null; status: PreferencesStatus } = {
  memberId: null,
  status: "none",
};
const statusListeners = new Set<() => void>();

function setPrefsStatus(
  memberId: string | null,
  status: PreferencesStatus,
): void {
  prefsStatus = { memberId, status };
  for (const l of statusListeners) l();
}

export function usePreferencesStatus(
  memberId: string | null,
): PreferencesStatus {
  const s = useSyncExternalStore(
    (l) => {
      statusListeners.add(l);
      return () => statusListeners.delete(l);
    },
    () => prefsStatus,
    () => prefsStatus,
  );
  return memberId !== null && s.memberId === memberId ? s.status : "none";
}

// Forgets the member's data (sign-out, tests).
export function resetMemberSync(): void {
  prefs = null;
  prefsQueue = Promise.resolve();
  setFavoritesStore(null);
  setPrefsStatus(null, "none");
}

// Applies stored preferences to this browser, but for the keys in keep
// (chosen here since sign-in).
async function apply(
  doc: PreferencesDoc,
  keep: { theme: boolean; language: boolean },
  setTheme: (t: "dark" | "light") => void,
): Promise<void> {
  if (
    !keep.theme &&
    isTheme(doc.theme) &&
    document.documentElement.getAttribute("data-theme") !== doc.theme
  )
    setTheme(doc.theme);
  const lang = doc.language?.slice(0, 2);
  if (!keep.language && isLocale(lang) && lang !== requestedLocale())
    await applyLocale(lang);
  for (const [page, sub] of Object.entries(doc.sub_pages ?? {})) {
    if (page in SUBPAGE_KEYS)
      writeStored(SUBPAGE_KEYS[page as keyof typeof SUBPAGE_KEYS], sub);
  }
}

// The theme and language this page shows or is switching to right now (not as
// of the last render: a change may land while the stored preferences are
// read).
function liveChoice(): { theme?: string; language: string } {
  const theme = document.documentElement.getAttribute("data-theme");
  return {
    theme: isTheme(theme) ? theme : undefined,
    language: requestedLocale(),
  };
}

// When a member was first seen: the choices counted by then. Whatever is
// chosen after it is newer than the member's stored preferences.
export type SignedIn = { memberId: string; choices: ChoiceCounts };

// Mounted once inside the app's providers. signedIn is taken when the member
// is first seen, before this component's code has loaded; a later sign-in
// counts from the moment this component sees it.
export function MemberSync({ signedIn }: { signedIn?: SignedIn }) {
  const member = useMember();
  const { theme, setTheme } = useTheme();
  const { i18n } = useLingui();
  const locale = i18n.locale;
  const ready = useRef<string | null>(null);
  const first = useRef(signedIn);
  const id = member?.id ?? null;

  useEffect(() => {
    if (!id) {
      ready.current = null;
      first.current = undefined;
      resetMemberSync();
      return;
    }
    let live = true;
    const base =
      first.current?.memberId === id ? first.current.choices : choiceCounts();
    first.current = undefined;
    setPrefsStatus(id, "loading");
    // The member's store takes over at once: it shows this browser's list
    // until the member's is read, and sends the stars changed meanwhile after.
    // If the list cannot be read, the local one stays in use.
    const favs = serverFavoritesStore(id);
    setFavoritesStore(favs);
    void favs.load().catch(() => {
      if (!live) return;
      favs.keepLocal();
      setFavoritesStore(null);
    });
    // A theme or language chosen in this browser since the member was seen is
    // newer than the stored preferences: it stays and is written over them.
    const chosen = () => {
      const now = choiceCounts();
      return {
        theme: now.theme > base.theme,
        language: now.language > base.language,
      };
    };
    void (async () => {
      try {
        const p = await readPreferences(id);
        if (!live) return;
        if (p.version === 0) await updatePreferences(liveChoice());
        else await apply(p.doc, chosen(), setTheme);
        if (!live) return;
        ready.current = id;
        const keep = chosen();
        const shown = liveChoice();
        const saved = preferencesSnapshot() ?? {};
        const back: PreferencesDoc = {};
        if (keep.theme && shown.theme !== saved.theme) back.theme = shown.theme;
        if (keep.language && shown.language !== saved.language)
          back.language = shown.language;
        if (Object.keys(back).length > 0)
          await updatePreferences(back).catch(() => undefined);
        if (live) setPrefsStatus(id, "ready");
      } catch {
        // Preferences stay local until the next sign-in.
        if (live) setPrefsStatus(id, "failed");
      }
    })();
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);

  // Later changes of theme and language are saved.
  useEffect(() => {
    if (!id || ready.current !== id || !prefs) return;
    if (prefs.doc.theme === theme && prefs.doc.language === locale) return;
    void updatePreferences({ theme, language: locale }).catch(() => undefined);
  }, [id, theme, locale]);

  return null;
}

import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from "react";
import { DEFAULT_THEME, isTheme, noteChoice, THEME_KEY, writeStored, type Theme } from "./preferences";

type ThemeContextValue = { theme: Theme; setTheme: (t: Theme) => void; toggle: () => void };

const ThemeContext = createContext<ThemeContextValue | null>(null);

function documentTheme(): Theme {
  if (typeof document === "undefined") return DEFAULT_THEME;
  const t = document.documentElement.getAttribute("data-theme");
  return isTheme(t) ? t : DEFAULT_THEME;
}

export function ThemeProvider({ children }: { children: ReactNode }) {
  // The boot script has already put the stored theme on <html>.
  const [theme, setState] = useState<Theme>(documentTheme);
  const setTheme = useCallback((t: Theme) => {
    document.documentElement.setAttribute("data-theme", t);
    writeStored(THEME_KEY, t);
    setState(t);
  }, []);
  // The visitor's own choice (setTheme alone is also used to apply stored preferences).
  const toggle = useCallback(() => {
    noteChoice("theme");
    setTheme(documentTheme() === "dark" ? "light" : "dark");
  }, [setTheme]);
  const value = useMemo(() => ({ theme, setTheme, toggle }), [theme, setTheme, toggle]);
  return <ThemeContext.Provider value={value}>{children}</ThemeContext.Provider>;
}

export function useTheme(): ThemeContextValue {
  const v = useContext(ThemeContext);
  if (!v) throw new Error("useTheme outside ThemeProvider");
  return v;
}

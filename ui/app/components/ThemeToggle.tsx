import { useLingui } from "@lingui/react/macro";
import { useTheme } from "~/theme";

export function ThemeToggle() {
  const { t } = useLingui();
  const { theme, toggle } = useTheme();
  const label = theme === "dark" ? t`Switch to light theme` : t`Switch to dark theme`;
  return (
    <button type="button" className="icon-button" onClick={toggle} aria-label={label} title={label} data-testid="theme-toggle">
      {theme === "dark" ? (
        <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
          <circle cx="12" cy="12" r="4.5" fill="currentColor" />
          <path
            d="M12 2v2.5M12 19.5V22M2 12h2.5M19.5 12H22M4.9 4.9l1.8 1.8M17.3 17.3l1.8 1.8M4.9 19.1l1.8-1.8M17.3 6.7l1.8-1.8"
            stroke="currentColor"
            strokeWidth="1.8"
            strokeLinecap="round"
          />
        </svg>
      ) : (
        <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true" focusable="false">
          <path d="M20 14.5A8.5 8.5 0 0 1 9.5 4a8.5 8.5 0 1 0 10.5 10.5Z" fill="currentColor" />
        </svg>
      )}
    </button>
  );
}

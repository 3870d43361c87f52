import { useLingui } from "@lingui/react/macro";
import { useId, useState } from "react";
import { changeLocale, LANGUAGE_NAMES } from "~/i18n";
import { isLocale, LOCALES } from "~/preferences";

export function LanguageMenu() {
  const { t, i18n } = useLingui();
  const id = useId();
  const [busy, setBusy] = useState(false);
  return (
    <div className="language-menu">
      <label htmlFor={id} className="visually-hidden">
        {t`Language`}
      </label>
      <select
        id={id}
        value={i18n.locale}
        disabled={busy}
        data-testid="language-menu"
        onChange={(e) => {
          const next = e.currentTarget.value;
          if (!isLocale(next)) return;
          setBusy(true);
          changeLocale(next)
            .catch((err: unknown) => console.error("language change failed", err))
            .finally(() => setBusy(false));
        }}
      >
        {LOCALES.map((l) => (
          <option key={l} value={l} lang={l}>
            {LANGUAGE_NAMES[l]}
          </option>
        ))}
      </select>
    </div>
  );
}

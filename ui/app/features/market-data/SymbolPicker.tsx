import { useLingui } from "@lingui/react/macro";
import { useId, useMemo, useState, type KeyboardEvent } from "react";
import type { Instrument } from "./api";

export const MAX_OPTIONS = 50;

// Instruments whose symbol or base/quote hold every word of the query
// ("btc usdt", "eth-usdt"), case-insensitive.
export function searchInstruments(list: readonly Instrument[], query: string): Instrument[] {
  const words = query
    .toLowerCase()
    .split(/[\s/_-]+/)
    .filter(Boolean);
  if (words.length === 0) return [...list];
  return list.filter((i) => {
    const hay = `${i.symbol} ${i.base}${i.quote} ${i.base}/${i.quote}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

// A searchable symbol box (combobox): type to filter, arrow keys to move,
// Enter to choose, Escape to leave unchanged.
export function SymbolPicker({
  instruments,
  value,
  onChange,
}: {
  instruments: readonly Instrument[];
  value: string;
  onChange: (symbol: string) => void;
}) {
  const { t } = useLingui();
  const id = useId();
  const [query, setQuery] = useState<string | null>(null);
  const [hi, setHi] = useState(0);
  const open = query !== null;
  const matches = useMemo(
    () => (open ? searchInstruments(instruments, query).slice(0, MAX_OPTIONS) : []),
    [instruments, query, open],
  );
  const choose = (s: string | undefined) => {
    setQuery(null);
    if (s && s !== value) onChange(s);
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!open) {
        setQuery("");
        setHi(0);
        return;
      }
      const d = e.key === "ArrowDown" ? 1 : -1;
      setHi((h) => Math.min(Math.max(0, h + d), Math.max(0, matches.length - 1)));
    } else if (e.key === "Enter") {
      if (open) {
        e.preventDefault();
        choose(matches[hi]?.symbol);
      }
    } else if (e.key === "Escape") {
      setQuery(null);
    }
  };
  return (
    <div className="md-symbol">
      <label htmlFor={`${id}-input`} className="md-field-label">{t`Symbol`}</label>
      <input
        id={`${id}-input`}
        type="text"
        role="combobox"
        autoComplete="off"
        spellCheck={false}
        aria-expanded={open}
        aria-controls={`${id}-list`}
        aria-autocomplete="list"
        aria-activedescendant={open && matches[hi] ? `${id}-opt-${hi}` : undefined}
        placeholder={t`Search symbols`}
        value={query ?? value}
        onFocus={(e) => e.currentTarget.select()}
        onChange={(e) => {
          setQuery(e.currentTarget.value);
          setHi(0);
        }}
        onKeyDown={onKey}
        onBlur={() => setQuery(null)}
        data-testid="symbol-input"
      />
      {open ? (
        <ul id={`${id}-list`} role="listbox" aria-label={t`Symbols`} className="md-options">
          {matches.length === 0 ? (
            <li className="md-option md-option--none" aria-disabled="true">{t`No symbols match.`}</li>
          ) : (
            matches.map((i, n) => (
              <li
                key={i.symbol}
                id={`${id}-opt-${n}`}
                role="option"
                aria-selected={n === hi}
                className={`md-option${n === hi ? " md-option--hi" : ""}`}
                data-symbol={i.symbol}
                onMouseDown={(e) => {
                  e.preventDefault();
                  choose(i.symbol);
                }}
                onMouseEnter={() => setHi(n)}
              >
                <span>{i.symbol}</span>
                <span className="md-option-pair">
                  {i.base}/{i.quote}
                </span>
              </li>
            ))
          )}
        </ul>
      ) : null}
    </div>
  );
}

import type { PreferencesDoc } from "~/features/dashboard/api";
import { isDecimal } from "~/lib/decimal";

// Sound alerts of the trade screen (spec: filled order, trading volume and
// order alerts, each on when the setting is on or unset; sound volume default
// 0.5). The settings live in the member's preferences (alerts{} and
// sound_volume); the sounds are short tones made with Web Audio, so the app
// ships no audio files.

export const ALERTS = { filled: "filled_order", volume: "trading_volume", order: "order" } as const;
export type AlertKind = keyof typeof ALERTS;

export const DEFAULT_VOLUME = "0.5";

// On unless the member turned it off.
export function alertOn(doc: PreferencesDoc | null | undefined, kind: AlertKind): boolean {
  return doc?.alerts?.[ALERTS[kind]] !== false;
}

// The volume as a gain from 0 to 1 (a sound level, not money): the saved
// decimal string, else the default.
export function volumeOf(doc: PreferencesDoc | null | undefined): number {
  const v = doc?.sound_volume;
  const n = isDecimal(v) ? Number(v) : Number(DEFAULT_VOLUME);
  return Math.min(1, Math.max(0, n));
}

// Which alert a private stream message raises, if any: a fill is traded
// volume, an order that reached FILLED is a filled order, a new order is an
// order alert.
export function alertFor(m: { type: string; order?: unknown; fill?: unknown }): AlertKind | null {
  if (m.type === "fill") return "volume";
  if (m.type === "order") {
    const status = (m.order as { status?: string } | undefined)?.status;
    if (status === "ORDER_STATUS_FILLED") return "filled";
    if (status === "ORDER_STATUS_NEW") return "order";
  }
  return null;
}

const TONES: Record<AlertKind, number[]> = { filled: [660, 880], volume: [520], order: [440] };

type AudioLike = {
  currentTime: number;
  destination: unknown;
  createOscillator(): { frequency: { value: number }; connect(n: unknown): void; start(t?: number): void; stop(t?: number): void };
  createGain(): { gain: { value: number; setValueAtTime(v: number, t: number): void; exponentialRampToValueAtTime(v: number, t: number): void }; connect(n: unknown): void };
};

let ctx: AudioLike | null = null;

// Plays the alert's tone at the volume (nothing when the browser has no Web Audio or the volume is 0).
export function playAlert(kind: AlertKind, volume: number, make: () => AudioLike | null = defaultAudio): void {
  if (volume <= 0) return;
  ctx ??= make();
  if (!ctx) return;
  let t = ctx.currentTime;
  for (const f of TONES[kind]) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = f;
    gain.gain.setValueAtTime(volume * 0.3, t);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.15);
    osc.connect(gain);
    gain.connect(ctx.destination);
    osc.start(t);
    osc.stop(t + 0.16);
    t += 0.17;
  }
}

function defaultAudio(): AudioLike | null {
  const C = (globalThis as { AudioContext?: new () => AudioLike }).AudioContext;
  try {
    return C ? new C() : null;
  } catch {
    return null;
  }
}

// Tests: forget the audio context.
export function resetAlertAudio(): void {
  ctx = null;
}

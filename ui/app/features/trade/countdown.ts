// Time left until the next funding, as HH:MM:SS; "--:--:--" when unknown.
export function fundingCountdown(nextFundingTime: number | undefined, now: number): string {
  if (!nextFundingTime) return "--:--:--";
  const left = Math.max(0, Math.floor((nextFundingTime - now) / 1000));
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  return [h, m, s].map((n) => String(n).padStart(2, "0")).join(":");
}

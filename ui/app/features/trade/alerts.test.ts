import { describe, expect, it } from "vitest";
import { alertFor, alertOn, playAlert, resetAlertAudio, volumeOf } from "./alerts";

describe("sound alerts", () => {
  it("are on when the setting is on or unset", () => {
    expect(alertOn(null, "filled")).toBe(true);
    expect(alertOn({}, "order")).toBe(true);
    expect(alertOn({ alerts: { filled_order: true } }, "filled")).toBe(true);
    expect(alertOn({ alerts: { filled_order: false } }, "filled")).toBe(false);
    expect(alertOn({ alerts: { filled_order: false } }, "volume")).toBe(true);
  });
  it("play at the saved volume, 0.5 by default", () => {
    expect(volumeOf(null)).toBe(0.5);
    expect(volumeOf({ sound_volume: "0.8" })).toBe(0.8);
    expect(volumeOf({ sound_volume: "7" })).toBe(1);
    expect(volumeOf({ sound_volume: "loud" })).toBe(0.5);
  });
  it("follow the member's orders and fills", () => {
    expect(alertFor({ type: "fill", fill: {} })).toBe("volume");
    expect(alertFor({ type: "order", order: { status: "ORDER_STATUS_FILLED" } })).toBe("filled");
    expect(alertFor({ type: "order", order: { status: "ORDER_STATUS_NEW" } })).toBe("order");
    expect(alertFor({ type: "order", order: { status: "ORDER_STATUS_CANCELED" } })).toBeNull();
    expect(alertFor({ type: "balance" })).toBeNull();
  });
  it("make a tone at the volume, and none at 0", () => {
    const gains: number[] = [];
    const started: number[] = [];
    const audio = {
      currentTime: 10,
      destination: {},
      createOscillator: () => ({ frequency: { value: 0 }, connect: () => undefined, start: (t?: number) => started.push(t ?? 0), stop: () => undefined }),
      createGain: () => ({
        gain: { value: 1, setValueAtTime: (v: number) => gains.push(v), exponentialRampToValueAtTime: () => undefined },
        connect: () => undefined,
      }),
    };
    resetAlertAudio();
    playAlert("order", 0, () => audio);
    expect(started).toEqual([]);
    playAlert("filled", 0.5, () => audio);
    expect(started).toHaveLength(2);
    expect(gains).toEqual([0.15, 0.15]);
    resetAlertAudio();
  });
});

import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";
import { AppProviders } from "~/providers";
import { ConfirmDialog, Menu } from ".";

function Confirm({ onConfirm }: { onConfirm: () => unknown }) {
  const [open, setOpen] = useState(false);
  return (
    <AppProviders>
      <button type="button" onClick={() => setOpen(true)}>
        Open
      </button>
      <ConfirmDialog
        isOpen={open}
        onOpenChange={setOpen}
        title="Delete"
        confirmLabel="OK"
        cancelLabel="Cancel"
        errorText="It failed."
        onConfirm={onConfirm}
      >
        <p>Sure?</p>
      </ConfirmDialog>
    </AppProviders>
  );
}

describe("ui primitives", () => {
  it("ConfirmDialog traps focus, stays open on failure and closes on success or Escape", async () => {
    let ok = false;
    const onConfirm = vi.fn(async () => ok);
    render(<Confirm onConfirm={onConfirm} />);
    const opener = screen.getByRole("button", { name: "Open" });
    act(() => opener.focus());
    fireEvent.click(opener);
    const dialog = await screen.findByRole("alertdialog", { name: "Delete" });
    await waitFor(() => expect(document.activeElement).toBe(within(dialog).getByRole("button", { name: "OK" })));
    fireEvent.click(within(dialog).getByRole("button", { name: "OK" }));
    expect(await within(dialog).findByRole("alert")).toHaveProperty("textContent", "It failed.");
    ok = true;
    fireEvent.click(within(dialog).getByRole("button", { name: "OK" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(onConfirm).toHaveBeenCalledTimes(2);
    fireEvent.click(opener);
    const again = await screen.findByRole("alertdialog");
    expect(within(again).queryByRole("alert")).toBeNull();
    fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    await waitFor(() => expect(document.activeElement).toBe(opener));
  });

  it("Menu opens from the keyboard, skips disabled items and runs actions", async () => {
    const picked = vi.fn();
    render(
      <AppProviders>
        <Menu
          label="Markets"
          aria-label="Markets"
          items={[
            { id: "a", label: "Alpha", textValue: "Alpha", onAction: () => picked("a") },
            { id: "b", label: "Beta", textValue: "Beta", isDisabled: true, onAction: () => picked("b") },
            { id: "c", label: "Gamma", textValue: "Gamma", onAction: () => picked("c") },
          ]}
        />
      </AppProviders>,
    );
    const trigger = screen.getByRole("button", { name: "Markets" });
    fireEvent.keyDown(trigger, { key: "ArrowDown" });
    const menu = await screen.findByRole("menu");
    await waitFor(() => expect(document.activeElement?.textContent).toBe("Alpha"));
    expect(within(menu).getByRole("menuitem", { name: "Beta" }).getAttribute("aria-disabled")).toBe("true");
    fireEvent.keyDown(document.activeElement!, { key: "ArrowDown" });
    await waitFor(() => expect(document.activeElement?.textContent).toBe("Gamma"));
    fireEvent.keyDown(document.activeElement!, { key: "Enter" });
    fireEvent.keyUp(document.activeElement!, { key: "Enter" });
    await waitFor(() => expect(picked).toHaveBeenCalledWith("c"));
    await waitFor(() => expect(screen.queryByRole("menu")).toBeNull());
    expect(picked).toHaveBeenCalledTimes(1);
  });
});

import type { ReactNode } from "react";
import { Button, Menu as AriaMenu, MenuItem as AriaMenuItem, MenuTrigger, Popover } from "react-aria-components";

// A menu button on react-aria-components: arrow keys move between items,
// typing jumps to an item, Enter/Space picks, Escape closes and focus goes
// back to the button. Items may be links (href) or actions (onAction).
// Heavy (react-aria): import lazily from first-load code.

export type UiMenuItem = {
  id: string;
  label: ReactNode;
  // A link; the router handles same-origin paths (RouterProvider in the app).
  href?: string;
  external?: boolean;
  isDisabled?: boolean;
  onAction?: () => void;
  // Shown after the label (a badge, an icon).
  extra?: ReactNode;
  textValue: string;
};

type MenuProps = {
  label: ReactNode;
  items: UiMenuItem[];
  triggerClassName?: string;
  defaultOpen?: boolean;
  testId?: string;
  "aria-label"?: string;
};

export function Menu({ label, items, triggerClassName, defaultOpen, testId, ...rest }: MenuProps) {
  return (
    <MenuTrigger defaultOpen={defaultOpen}>
      <Button className={triggerClassName ?? "nav-button"} data-testid={testId}>
        {label}
        <span className="caret" aria-hidden="true" />
      </Button>
      <Popover className="ui-popover" placement="bottom start" offset={4}>
        <AriaMenu className="ui-menu" aria-label={rest["aria-label"]} disabledKeys={items.filter((i) => i.isDisabled).map((i) => i.id)}>
          {items.map((i) => (
            <AriaMenuItem
              key={i.id}
              id={i.id}
              className="ui-menu-item menu-item"
              textValue={i.textValue}
              href={i.isDisabled ? undefined : i.href}
              target={i.external ? "_blank" : undefined}
              rel={i.external ? "noopener noreferrer" : undefined}
              onAction={i.onAction}
            >
              {i.label}
              {i.extra}
            </AriaMenuItem>
          ))}
        </AriaMenu>
      </Popover>
    </MenuTrigger>
  );
}

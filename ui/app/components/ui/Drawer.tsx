import { useLingui } from "@lingui/react/macro";
import type { ReactNode } from "react";
import { Button, Dialog, Disclosure, DisclosurePanel, Heading, Modal, ModalOverlay } from "react-aria-components";

// A side sheet (the phone menu) on react-aria-components: a modal dialog
// sliding from the right, Escape or a click outside closes it, focus is
// trapped inside and returns to the opener. Heavy (react-aria): import
// lazily from first-load code.

type DrawerProps = {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  label: string;
  children: ReactNode;
  testId?: string;
};

export function Drawer({ isOpen, onOpenChange, label, children, testId }: DrawerProps) {
  const { t } = useLingui();
  return (
    <ModalOverlay className="ui-overlay ui-overlay--sheet" isOpen={isOpen} onOpenChange={onOpenChange} isDismissable>
      <Modal className="ui-sheet">
        <Dialog className="drawer" aria-label={label} data-testid={testId}>
          {({ close }) => (
            <>
              <Button className="icon-button ui-sheet-close" aria-label={t`Close`} onPress={close}>
                ×
              </Button>
              {children}
            </>
          )}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

// A collapsible group inside a drawer (a heading button that shows or hides
// its panel, aria-expanded on the button).
export function DrawerGroup({ title, children, defaultExpanded }: { title: ReactNode; children: ReactNode; defaultExpanded?: boolean }) {
  return (
    <Disclosure className="drawer-group" defaultExpanded={defaultExpanded}>
      <Heading className="drawer-group-heading">
        <Button slot="trigger" className="drawer-group-button">
          {title}
        </Button>
      </Heading>
      <DisclosurePanel className="drawer-group-panel">{children}</DisclosurePanel>
    </Disclosure>
  );
}

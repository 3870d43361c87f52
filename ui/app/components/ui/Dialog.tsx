import { useLingui } from "@lingui/react/macro";
import { useState, type ReactNode } from "react";
import { Button, Dialog as AriaDialog, Heading, Modal, ModalOverlay } from "react-aria-components";

// Accessible dialogs on react-aria-components: focus moves in and is trapped
// while open, Escape and a click outside close (unless dismissable is false),
// focus returns to the opener, and the page behind is inert. Styled with the
// theme's CSS variables (app.css, .ui-*). This module is heavy (react-aria):
// import it lazily from anything on the first load.

type DialogProps = {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  children: ReactNode;
  // Buttons under the content.
  actions?: ReactNode;
  dismissable?: boolean;
  role?: "dialog" | "alertdialog";
  testId?: string;
};

export function Dialog({ isOpen, onOpenChange, title, children, actions, dismissable = true, role, testId }: DialogProps) {
  const { t } = useLingui();
  return (
    <ModalOverlay className="ui-overlay" isOpen={isOpen} onOpenChange={onOpenChange} isDismissable={dismissable}>
      <Modal className="ui-modal">
        <AriaDialog className="ui-dialog" role={role} data-testid={testId}>
          {({ close }) => (
            <>
              <div className="ui-dialog-head">
                <Heading slot="title">{title}</Heading>
                {dismissable ? (
                  <Button className="icon-button" aria-label={t`Close`} onPress={close}>
                    ×
                  </Button>
                ) : null}
              </div>
              <div className="ui-dialog-body">{children}</div>
              {actions ? <div className="ui-dialog-actions">{actions}</div> : null}
            </>
          )}
        </AriaDialog>
      </Modal>
    </ModalOverlay>
  );
}

type ConfirmProps = {
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  children: ReactNode;
  confirmLabel: ReactNode;
  cancelLabel?: ReactNode;
  // May be async: the buttons are disabled while it runs; a rejection or
  // `false` keeps the dialog open and shows `errorText`.
  onConfirm: () => unknown;
  errorText?: ReactNode;
};

// A question with OK (and an optional Cancel).
export function ConfirmDialog({ isOpen, onOpenChange, title, children, confirmLabel, cancelLabel, onConfirm, errorText }: ConfirmProps) {
  const [busy, setBusy] = useState(false);
  const [failed, setFailed] = useState(false);
  const confirm = async () => {
    setBusy(true);
    setFailed(false);
    try {
      const r = await onConfirm();
      if (r === false) setFailed(true);
      else onOpenChange(false);
    } catch {
      setFailed(true);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      isOpen={isOpen}
      onOpenChange={(o) => {
        if (!o) setFailed(false);
        onOpenChange(o);
      }}
      title={title}
      role="alertdialog"
      actions={
        <>
          {cancelLabel ? (
            <Button className="button" onPress={() => onOpenChange(false)} isDisabled={busy}>
              {cancelLabel}
            </Button>
          ) : null}
          <Button className="button button--primary" onPress={() => void confirm()} isDisabled={busy} autoFocus>
            {confirmLabel}
          </Button>
        </>
      }
    >
      {children}
      {failed && errorText ? (
        <p className="form-error" role="alert">
          {errorText}
        </p>
      ) : null}
    </Dialog>
  );
}

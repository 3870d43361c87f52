// Heavy (react-aria-components): first-load code imports these lazily.
export { ConfirmDialog, Dialog } from "./Dialog";
export { Drawer, DrawerGroup } from "./Drawer";
export { Menu, type UiMenuItem } from "./Menu";

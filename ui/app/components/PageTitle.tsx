// Sets the browser title to "exhub | <page>". React hoists <title> into
// <head>; the caller passes an already translated page name.
export function PageTitle({ page }: { page: string }) {
  return <title>{`exhub | ${page}`}</title>;
}

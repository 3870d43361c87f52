#!/bin/sh
# Installs the offline API reference bundle served at /api/docs: the browser build of @stoplight/elements, taken
# from its npm package with the ordinary npm client. Only two files are kept (bff/apidocs/dist/, git-ignored), so
# this costs well under a megabyte instead of the package's full dependency tree. Idempotent.
set -eu
VERSION=9.0.25
here=$(cd "$(dirname "$0")" && pwd)
dist="$here/dist"
if [ -f "$dist/web-components.min.js" ] && [ -f "$dist/styles.min.css" ] && [ "$(cat "$dist/VERSION" 2>/dev/null)" = "$VERSION" ]; then
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "bff/apidocs: npm is required (install Node.js 20 with npm)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "@stoplight/elements@$VERSION" --silent >/dev/null)
tar -xzf "$tmp"/stoplight-elements-"$VERSION".tgz -C "$tmp" package/web-components.min.js package/styles.min.css
mkdir -p "$dist"
mv "$tmp/package/web-components.min.js" "$tmp/package/styles.min.css" "$dist/"
echo "$VERSION" > "$dist/VERSION"
echo "bff/apidocs: @stoplight/elements $VERSION installed in $dist"

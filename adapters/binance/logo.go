package binance

// logoSVG: a simple diamond mark of four small squares around a larger one, in Binance's yellow.
const logoSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" role="img" aria-label="Binance">` +
	`<rect width="64" height="64" rx="12" fill="#1e2026"/>` +
	`<g fill="#f0b90b" transform="rotate(45 32 32)">` +
	`<rect x="25" y="25" width="14" height="14"/>` +
	`<rect x="27" y="9" width="10" height="10"/><rect x="27" y="45" width="10" height="10"/>` +
	`<rect x="9" y="27" width="10" height="10"/><rect x="45" y="27" width="10" height="10"/>` +
	`</g></svg>`

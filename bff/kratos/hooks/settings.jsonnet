// Body of the after-settings web hooks to the BFF
// (POST /internal/kratos/hooks/settings?method=password|totp|lookup_secret|profile).
// Kratos' hook context names neither the method (the URL does) nor the
// traits before the change, so it sends the identity's verifiable addresses
// and when the flow began: an address created after that was added by this
// change (a new e-mail or mobile), which starts the withdrawal lockout.
// Kratos forbids imports in jsonnet, so each body carries these helpers.
local traits(t) = {
  email: std.get(t, 'email', ''),
  phone: std.get(t, 'phone', ''),
  nickname: std.get(t, 'nickname', ''),
  locale: std.get(t, 'locale', ''),
  referral_code: std.get(t, 'referral_code', ''),
};
// The True-Client-Ip request header: the only forwarding header Kratos passes
// to web hooks.
local trueClientIP(ctx) =
  local h = std.get(std.get(ctx, 'request_headers', {}), 'True-Client-Ip', []);
  if std.length(h) > 0 then h[0] else '';
local orEmpty(v) = if v == null then [] else v;

function(ctx) {
  identity_id: ctx.identity.id,
  traits: traits(ctx.identity.traits),
  flow_issued_at: std.get(ctx.flow, 'issued_at', null),
  addresses: [
    { via: std.get(a, 'via', ''), value: std.get(a, 'value', ''), created_at: std.get(a, 'created_at', null) }
    for a in orEmpty(std.get(ctx.identity, 'verifiable_addresses', []))
  ],
  true_client_ip: trueClientIP(ctx),
}

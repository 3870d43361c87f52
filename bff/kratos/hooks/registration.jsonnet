// Body of the after-registration web hook to the BFF
// (POST /internal/kratos/hooks/registration): the new identity and its
// traits; the BFF creates the member row, applying the referral code once.
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

function(ctx) {
  identity_id: ctx.identity.id,
  traits: traits(ctx.identity.traits),
  true_client_ip: trueClientIP(ctx),
}

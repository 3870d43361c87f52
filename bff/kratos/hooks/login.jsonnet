// Body of the after-login web hook to the BFF (POST /internal/kratos/hooks/login):
// the session, when it was authenticated and the client address Kratos
// recorded for its device; the BFF records it as the member's latest login
// (once per session).
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
  local session = std.get(ctx, 'session', {}),
  local devices = std.get(session, 'devices', []),
  identity_id: ctx.identity.id,
  traits: traits(ctx.identity.traits),
  session_id: std.get(session, 'id', ''),
  authenticated_at: std.get(session, 'authenticated_at', null),
  ip: if std.length(devices) > 0 then std.get(devices[std.length(devices) - 1], 'ip_address', '') else '',
  true_client_ip: trueClientIP(ctx),
}

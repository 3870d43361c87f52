// Body of each SMS that Kratos' HTTP courier channel "sms" posts to the demo
// inbox (Mailpit's POST /api/v1/send). The text message becomes a mail to
// <digits>@sms.exhub.local, e.g. +819012345678 -> 819012345678@sms.exhub.local,
// tagged "sms", so the inbox shows e-mail and SMS side by side.
function(ctx) {
  local digits = std.strReplace(ctx.recipient, '+', ''),
  From: { Email: 'sms@exhub.local', Name: 'exhub SMS' },
  To: [{ Email: digits + '@sms.exhub.local', Name: ctx.recipient }],
  Subject: 'SMS to ' + ctx.recipient,
  Text: ctx.body,
  Tags: ['sms'],
}

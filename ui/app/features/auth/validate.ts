import { z } from "zod";

// Checks of the sign-in screens beyond lib/validation: the mobile number as
// stored (E.164) and the referral code, with the identity schema's patterns
// (bff/kratos/identity.schema.json).
const e164 = z.string().regex(/^\+[1-9][0-9]{6,14}$/);
const referral = z.string().regex(/^[A-Za-z0-9]{4,16}$/);

export const isE164 = (v: string) => e164.safeParse(v).success;
export const isReferralCode = (v: string) => referral.safeParse(v).success;

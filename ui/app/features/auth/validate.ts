import { z } from "zod";

// Field checks of the sign-in screens (zod formats; the identity schema in
// bff/kratos has the same patterns).
const email = z.email();
const e164 = z.string().regex(/^\+[1-9][0-9]{6,14}$/);
const referral = z.string().regex(/^[A-Za-z0-9]{4,16}$/);

export const isEmail = (v: string) => email.safeParse(v.trim()).success;
export const isE164 = (v: string) => e164.safeParse(v).success;
export const isReferralCode = (v: string) => referral.safeParse(v).success;

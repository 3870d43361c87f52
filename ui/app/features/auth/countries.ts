// The calling codes and E.164 helpers live with the form kit's PhoneField.
export { COUNTRIES, countryName, looksLikePhone, toE164, type Country } from "~/components/form/countries";

export { applySubmitError, Form, useZodForm } from "./Form";
export { CheckboxField, errorMessages, Field, FormError, PasswordRules, SubmitButton, TextField, type ControlProps } from "./Field";
export { checkPhone, CodeField, isPasswordRuleCode, NewPasswordFields, PhoneField, setPasswordRuleErrors } from "./fields";
export { COUNTRIES, countryName, looksLikePhone, toE164, type Country } from "./countries";

export { applySubmitError, Form, useZodForm } from "./Form";
export { CheckboxField, errorMessages, Field, FormError, PasswordRules, SubmitButton, TextField, type ControlProps } from "./Field";

import { Trans, useLingui } from "@lingui/react/macro";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRef, type ChangeEvent } from "react";
import { z } from "zod";
import { Field, Form, FormError, SubmitButton, useZodForm } from "~/components/form";
import { Alert, Loading } from "~/features/auth/AuthLayout";
import { showToast } from "~/features/auth/toast";
import { errorText, isApiError } from "~/lib/errors";
import { useExchanges } from "~/lib/exchanges";
import {
  getKyc,
  keys,
  startKyc,
  submitKyc,
  uploadKycDocument,
  type KycKind,
  type KycState,
} from "./api";

// Identity verification: KYC for a person, KYB for a company. The
// application goes pending (documents are added), In Review (submitted),
// then Completed or Declined (with the reason; the member applies again).
// Per-exchange flags say where the verification is accepted.

// SPEC: attachments at most 5 MB.
export const MAX_UPLOAD_BYTES = 5 * 1024 * 1024;
export const ACCEPTED_TYPES = [
  "image/jpeg",
  "image/png",
  "image/webp",
  "application/pdf",
];

export type FileProblem = "size" | "type" | null;

export function checkFile(f: { size: number; type: string }): FileProblem {
  if (!ACCEPTED_TYPES.includes(f.type)) return "type";
  if (f.size > MAX_UPLOAD_BYTES) return "size";
  return null;
}

export function useKycStateText(): (s: KycState) => string {
  const { t } = useLingui();
  return (s) => {
    switch (s) {
      case "none":
        return t`Not verified`;
      case "pending":
        return t`Pending`;
      case "in_review":
        return t`In Review`;
      case "completed":
        return t`Completed`;
      case "declined":
        return t`Declined`;
    }
  };
}

const startSchema = z.object({ kind: z.enum(["person", "company"]) });
// The document field: no value of its own (the file uploads when chosen);
// the form carries the field's error.
const documentSchema = z.object({ file: z.string() });

function formatBytes(n: number, locale: string): string {
  const num = (v: number, digits: number) =>
    new Intl.NumberFormat(locale, { maximumFractionDigits: digits }).format(v);
  if (n < 1024) return `${num(n, 0)} B`;
  if (n < 1024 * 1024) return `${num(n / 1024, 0)} KB`;
  return `${num(n / 1024 / 1024, 1)} MB`;
}

export function KycSection() {
  const { t, i18n } = useLingui();
  const qc = useQueryClient();
  const stateText = useKycStateText();
  const exchanges = useExchanges();
  const q = useQuery({
    queryKey: keys.kyc,
    queryFn: getKyc,
    refetchInterval: (query) =>
      query.state.data?.state === "in_review" ? 5000 : false,
  });
  const startForm = useZodForm(startSchema, {
    defaultValues: { kind: "person" as KycKind },
  });
  const docForm = useZodForm(documentSchema, { defaultValues: { file: "" } });
  const setFileError = (message: string | null) =>
    message
      ? docForm.setError("file", { type: "server", message })
      : docForm.clearErrors("file");
  const fileRef = useRef<HTMLInputElement>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: keys.kyc });
  const sizeText = t`The attachment size exceeds the limit (maximum 5MB)`;
  const typeText = t`Choose an image (JPEG, PNG or WebP) or a PDF.`;

  const start = useMutation({ mutationFn: startKyc, onSuccess: refresh });
  const upload = useMutation({
    mutationFn: uploadKycDocument,
    onSuccess: async () => {
      if (fileRef.current) fileRef.current.value = "";
      await refresh();
    },
    onError: (e) =>
      setFileError(
        isApiError(e) && e.status === 413
          ? sizeText
          : isApiError(e) && e.status === 415
            ? typeText
            : errorText(e, t`Network anomaly`),
      ),
  });
  const submit = useMutation({
    mutationFn: submitKyc,
    onSuccess: async () => {
      showToast(t`Successfully sent!`);
      await refresh();
    },
  });

  const onFile = (e: ChangeEvent<HTMLInputElement>) => {
    setFileError(null);
    const f = e.target.files?.[0];
    if (!f) return;
    const problem = checkFile(f);
    if (problem) {
      setFileError(problem === "size" ? sizeText : typeText);
      e.target.value = "";
      return;
    }
    upload.mutate(f);
  };

  const k = q.data;
  const state: KycState = k?.state ?? "none";
  const docs = k?.documents ?? [];
  const flags = k?.exchanges ?? [];
  const nameOf = (slug: string) =>
    exchanges?.find((x) => x.slug === slug)?.name ?? slug;
  const mutationError = submit.error;

  return (
    <section
      className="dash-card"
      aria-labelledby="kyc-title"
      data-testid="kyc"
    >
      <h2 id="kyc-title">
        {k?.kind === "company" ? t`KYB verification` : t`KYC verification`}
      </h2>
      {q.isLoading ? <Loading /> : null}
      {q.isError ? (
        <Alert>{errorText(q.error, t`Network anomaly`)}</Alert>
      ) : null}
      {k ? (
        <>
          <p>
            <Trans>Status:</Trans>{" "}
            <span
              className={`dash-badge dash-badge--${state}`}
              data-testid="kyc-state"
              data-state={state}
            >
              {stateText(state)}
            </span>
          </p>
          {state === "declined" && k.reason ? (
            <Alert>
              <Trans>Declined: {k.reason}</Trans>
            </Alert>
          ) : null}
          {state === "in_review" ? (
            <p className="auth-hint">
              <Trans>
                Your documents are being reviewed. This page updates by itself.
              </Trans>
            </p>
          ) : null}
          {state === "completed" ? (
            <p className="auth-hint">
              <Trans>Your identity is verified.</Trans>
            </p>
          ) : null}
          {state === "none" || state === "declined" ? (
            <Form
              form={startForm}
              onSubmit={({ kind }) => start.mutateAsync(kind)}
              className="auth-form"
            >
              <fieldset className="dash-radios">
                <legend className="auth-label">
                  <Trans>Verify as</Trans>
                </legend>
                <label>
                  <input
                    type="radio"
                    value="person"
                    {...startForm.register("kind")}
                  />{" "}
                  <Trans>A person (KYC)</Trans>
                </label>
                <label>
                  <input
                    type="radio"
                    value="company"
                    {...startForm.register("kind")}
                  />{" "}
                  <Trans>A company (KYB)</Trans>
                </label>
              </fieldset>
              <FormError />
              <div className="auth-actions">
                <SubmitButton testId="kyc-start">
                  <Trans>Start verification</Trans>
                </SubmitButton>
              </div>
            </Form>
          ) : null}
          {state === "pending" ? (
            <Form
              form={docForm}
              onSubmit={() => undefined}
              className="auth-form"
            >
              <Field
                name="file"
                label={
                  k.kind === "company" ? (
                    <Trans>
                      Company registration documents (images or PDF, at most 5MB
                      each)
                    </Trans>
                  ) : (
                    <Trans>
                      Identity document (images or PDF, at most 5MB each)
                    </Trans>
                  )
                }
              >
                {(control) => (
                  <input
                    ref={fileRef}
                    className="input dash-file"
                    type="file"
                    accept={ACCEPTED_TYPES.join(",")}
                    onChange={onFile}
                    disabled={upload.isPending}
                    data-testid="kyc-file"
                    {...control}
                  />
                )}
              </Field>
              {docs.length > 0 ? (
                <ul className="dash-list" data-testid="kyc-documents">
                  {docs.map((d) => (
                    <li key={d.id}>
                      {d.file_name}{" "}
                      <span className="dash-muted">
                        {formatBytes(d.size, i18n.locale)}
                      </span>
                    </li>
                  ))}
                </ul>
              ) : null}
              <div className="auth-actions">
                <button
                  type="button"
                  className="button button--primary"
                  disabled={docs.length === 0 || submit.isPending}
                  onClick={() => submit.mutate()}
                  data-testid="kyc-submit"
                >
                  <Trans>Submit for review</Trans>
                </button>
              </div>
            </Form>
          ) : null}
          {mutationError ? (
            <Alert>{errorText(mutationError, t`Network anomaly`)}</Alert>
          ) : null}
          {flags.length > 0 ? (
            <>
              <h3>{t`Exchange verification`}</h3>
              <ul className="dash-list" data-testid="kyc-exchanges">
                {flags.map(({ exchange: slug, verified: ok }) => (
                  <li key={slug} data-exchange={slug}>
                    {nameOf(slug)}:{" "}
                    <span
                      className={`dash-badge${ok ? " dash-badge--ok" : ""}`}
                    >
                      {ok ? t`Verified` : t`Not verified`}
                    </span>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

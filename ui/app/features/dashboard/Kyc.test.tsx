import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { queryClient } from "~/api/queries";
import { renderAt } from "~/features/auth/testing/render";
import { resetSession } from "~/lib/session";
import { DashboardScreen } from "./Dashboard";
import { resetMemberSync } from "./sync";
import { checkFile, MAX_UPLOAD_BYTES } from "./Kyc";
import {
  fakeApi,
  jsonResponse,
  member,
  type ApiHandler,
} from "./testing/fake-api";

const SIZE_MESSAGE = "The attachment size exceeds the limit (maximum 5MB)";

beforeEach(() => {
  resetSession();
  resetMemberSync();
  queryClient.clear();
});
afterEach(() => {
  resetSession();
  document.getElementById("exhub-toasts")?.remove();
});

function file(name: string, type: string, size: number): File {
  const f = new File(["x"], name, { type });
  Object.defineProperty(f, "size", { value: size });
  return f;
}

function setup(routes: Record<string, ApiHandler>) {
  const api = fakeApi({
    "GET /api/v1/me": () => jsonResponse(member),
    "GET /api/v1/me/profile": () => jsonResponse(member),
    ...routes,
  });
  renderAt("/dashboard?page=profile", { "/dashboard": DashboardScreen });
  return api;
}

describe("checkFile", () => {
  it("accepts images and PDFs up to exactly 5 MB", () => {
    expect(checkFile({ type: "image/png", size: MAX_UPLOAD_BYTES })).toBeNull();
    expect(checkFile({ type: "application/pdf", size: 1 })).toBeNull();
    expect(checkFile({ type: "image/jpeg", size: MAX_UPLOAD_BYTES + 1 })).toBe(
      "size",
    );
    expect(checkFile({ type: "text/plain", size: 10 })).toBe("type");
  });
});

describe("KYC", () => {
  it("starts a KYB application for a company", async () => {
    let state = "none";
    const api = setup({
      "GET /api/v1/me/kyc": () =>
        jsonResponse({
          state,
          kind: state === "none" ? undefined : "company",
          documents: [],
          exchanges: [],
        }),
      "POST /api/v1/me/kyc": () => {
        state = "pending";
        return jsonResponse(
          { state, kind: "company", documents: [], exchanges: [] },
          201,
        );
      },
    });
    expect((await screen.findByTestId("kyc-state")).textContent).toBe(
      "Not verified",
    );
    fireEvent.click(screen.getByLabelText("A company (KYB)"));
    fireEvent.click(screen.getByTestId("kyc-start"));
    await waitFor(() =>
      expect(screen.getByTestId("kyc-state").textContent).toBe("Pending"),
    );
    expect(screen.getByText("KYB verification")).toBeTruthy();
    expect(api.calls.find((c) => c.method === "POST")!.body).toEqual({
      kind: "company",
    });
  });

  it("refuses a file over 5 MB in the browser with the spec's message and sends nothing", async () => {
    const api = setup({
      "GET /api/v1/me/kyc": () =>
        jsonResponse({
          state: "pending",
          kind: "person",
          documents: [],
          exchanges: [],
        }),
    });
    const input = await screen.findByTestId("kyc-file");
    fireEvent.change(input, {
      target: {
        files: [file("passport.jpg", "image/jpeg", MAX_UPLOAD_BYTES + 1)],
      },
    });
    expect(await screen.findByText(SIZE_MESSAGE)).toBeTruthy();
    expect(screen.getByTestId("kyc-file").getAttribute("aria-invalid")).toBe("true");
    expect(api.calls.some((c) => c.path === "/api/v1/me/kyc/documents")).toBe(
      false,
    );
  });

  it("shows the server's 413 with the same message", async () => {
    setup({
      "GET /api/v1/me/kyc": () =>
        jsonResponse({
          state: "pending",
          kind: "person",
          documents: [],
          exchanges: [],
        }),
      "POST /api/v1/me/kyc/documents": () =>
        jsonResponse(
          {
            title: "Request Entity Too Large",
            status: 413,
            detail: SIZE_MESSAGE,
          },
          413,
        ),
    });
    fireEvent.change(await screen.findByTestId("kyc-file"), {
      target: { files: [file("id.png", "image/png", 1000)] },
    });
    expect(await screen.findByText(SIZE_MESSAGE)).toBeTruthy();
    expect(screen.getByTestId("kyc-file").getAttribute("aria-invalid")).toBe("true");
  });

  it("uploads a document as multipart, lists it and submits the application for review", async () => {
    const docs: unknown[] = [];
    let state = "pending";
    const api = setup({
      "GET /api/v1/me/kyc": () =>
        jsonResponse({ state, kind: "person", documents: docs, exchanges: [] }),
      "POST /api/v1/me/kyc/documents": (c) => {
        // One part named file (jsdom's File loses its name on the way through Node's Request; browsers keep it).
        const part = (c.body as FormData).get("file");
        if (part === null || typeof part === "string")
          return jsonResponse(
            { title: "Unprocessable Entity", status: 422 },
            422,
          );
        const d = {
          id: "d1",
          file_name: "passport.png",
          content_type: "image/png",
          size: 2048,
          sha256: "0".repeat(64),
          created_at: "2026-03-04T05:06:07Z",
        };
        docs.push(d);
        return jsonResponse(d, 201);
      },
      "POST /api/v1/me/kyc/submit": () => {
        state = "in_review";
        return jsonResponse({
          state,
          kind: "person",
          documents: docs,
          exchanges: [],
        });
      },
    });
    const submitButton = (await screen.findByTestId(
      "kyc-submit",
    )) as HTMLButtonElement;
    expect(submitButton.disabled).toBe(true);
    fireEvent.change(screen.getByTestId("kyc-file"), {
      target: { files: [file("passport.png", "image/png", 2048)] },
    });
    const list = await screen.findByTestId("kyc-documents");
    expect(within(list).getByText(/passport\.png/)).toBeTruthy();
    expect(
      api.calls.find((c) => c.path === "/api/v1/me/kyc/documents")!.method,
    ).toBe("POST");
    fireEvent.click(screen.getByTestId("kyc-submit"));
    await waitFor(() =>
      expect(screen.getByTestId("kyc-state").textContent).toBe("In Review"),
    );
  });

  it("shows a declined application's reason, lets the member apply again, and the per-exchange flags", async () => {
    setup({
      "GET /api/v1/me/kyc": () =>
        jsonResponse({
          state: "declined",
          kind: "person",
          reason: "The photo is blurred.",
          documents: [],
          exchanges: [
            { exchange: "binance", verified: true },
            { exchange: "okx", verified: false },
          ],
        }),
    });
    expect((await screen.findByTestId("kyc-state")).textContent).toBe(
      "Declined",
    );
    expect(screen.getByText("Declined: The photo is blurred.")).toBeTruthy();
    expect(screen.getByTestId("kyc-start")).toBeTruthy();
    const flags = screen.getByTestId("kyc-exchanges");
    expect(
      within(flags)
        .getAllByRole("listitem")
        .map((li) => li.textContent),
    ).toEqual(["binance: Verified", "okx: Not verified"]);
  });
});

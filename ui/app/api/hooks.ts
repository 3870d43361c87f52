import createQueryClient from "openapi-react-query";
import type { Client } from "openapi-fetch";
import { strictApi } from "./client";
import type { paths } from "./schema";

// The typed query hooks over the generated paths, for screens:
//   const { data, error } = $api.useQuery("get", "/api/v1/tickers", { params: { query } }, { refetchInterval: 10_000 });
//   const save = $api.useMutation("put", "/api/v1/account/profile", { onSuccess: () => invalidatePath(...) });
// Keys are [method, path, init], the same as queryOptions in ~/api/queries,
// so both share one cache. Errors are ApiError (~/lib/errors). This module
// carries every hook kind (mutations, infinite queries), so the first-load
// code (shell, home) uses ~/api/queries instead.
export const $api = createQueryClient<paths>(
  new Proxy({} as Client<paths>, {
    // Resolved per call, so setApiFetch (tests) takes effect at once.
    get: (_t, key: keyof Client<paths>) => strictApi()[key],
  }),
);

/** Wraps an expensive read (RPC balance calls) so scrapes within `ttlMs` share one result. */
export function cached<T>(read: () => Promise<T>, ttlMs: number): () => Promise<T> {
  let value: { at: number; promise: Promise<T> } | undefined;
  return () => {
    if (!value || Date.now() - value.at > ttlMs) {
      const promise = read();
      value = { at: Date.now(), promise };
      promise.catch(() => {
        value = undefined;
      });
    }
    return value.promise;
  };
}

/** ISO 8601 UTC for a Unix millisecond time. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export const isUuid = (text: string): boolean =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);

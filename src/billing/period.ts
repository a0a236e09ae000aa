/**
 * Paid periods (issue 13): a period runs from the charge to the same time one calendar month
 * later, UTC, clamped to the last day of a shorter month (31 Jan -> 28 or 29 Feb). Pure.
 */
export function addOneMonth(ms: number): number {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth() + 1;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const day = Math.min(d.getUTCDate(), lastDay);
  return Date.UTC(year, month, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

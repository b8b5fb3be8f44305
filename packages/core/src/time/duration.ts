/** A length of time. Build one with {@link hours}, {@link minutes}, {@link seconds} or {@link milliseconds}. */
export interface Duration {
  readonly milliseconds: number;
}

/** A duration of `n` milliseconds. */
export const milliseconds = (n: number): Duration => Object.freeze({ milliseconds: n });
/** A duration of `n` seconds. */
export const seconds = (n: number): Duration => milliseconds(n * 1000);
/** A duration of `n` minutes. */
export const minutes = (n: number): Duration => seconds(n * 60);
/** A duration of `n` hours. */
export const hours = (n: number): Duration => minutes(n * 60);
/** A duration of `n` days. */
export const days = (n: number): Duration => hours(n * 24);

/** Milliseconds of a duration or of a plain number of milliseconds. */
export function toMilliseconds(d: Duration | number): number {
  return typeof d === "number" ? d : d.milliseconds;
}

/**
 * Floats as Rust prints them through ryu (serde_json and serde_yaml): the shortest digits that
 * round-trip, laid out as ryu's `format_finite` does — `2.0`, `0.1`, `1e16`, `1.5e-7`, `1e-6`.
 */
export function formatFloatRyu(v: number): string {
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const neg = v < 0;
  const [mant, expStr] = Math.abs(v).toExponential().split('e') as [string, string];
  const digits = mant.replace('.', '');
  const len = digits.length;
  const kk = Number(expStr) + 1; // position of the decimal point relative to the digits
  let s: string;
  if (len <= kk && kk <= 16) s = digits + '0'.repeat(kk - len) + '.0';
  else if (0 < kk && kk <= 16) s = digits.slice(0, kk) + '.' + digits.slice(kk);
  else if (-5 < kk && kk <= 0) s = '0.' + '0'.repeat(-kk) + digits;
  else {
    const e = kk - 1;
    s = (len === 1 ? digits : digits[0] + '.' + digits.slice(1)) + 'e' + e;
  }
  return neg ? '-' + s : s;
}
